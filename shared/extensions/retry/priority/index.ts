/** The retry priorities, each in a folder of its own: one line each (../lookup.ts finds them). */
export { extensions as previousPriorities } from './previous-priorities/descriptor.js';
