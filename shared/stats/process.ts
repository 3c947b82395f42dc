import { StatsStore } from './store.js';

/** This process's statistics (each process of the tree has its own; the admin process merges them). */
export const stats = new StatsStore();
