import type { ExtensionDescriptor, HttpFilterDescriptor } from '../../../descriptor.js';
import { luaFactory } from './lua.js';

/** Lua scripts with Envoy's stream handle API, on wasmoon; per route too. */
export const extensions: readonly (ExtensionDescriptor | HttpFilterDescriptor)[] = [
  {
    name: 'envoy.filters.http.lua',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.lua.v3.Lua',
    perRouteTypeName: 'envoy.extensions.filters.http.lua.v3.LuaPerRoute',
    description: 'runs Lua scripts on requests and responses (Envoy\'s stream handle API)',
    deprecatedNames: ['envoy.lua'],
    fields: {
      'envoy.extensions.filters.http.lua.v3.Lua': ['inline_code', 'source_codes', 'default_source_code', 'stat_prefix'],
      'envoy.extensions.filters.http.lua.v3.LuaPerRoute': ['disabled', 'name', 'source_code'],
    },
    create: (name, config, ctx) => luaFactory(name, config, ctx),
  },
];
