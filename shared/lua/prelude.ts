/**
 * The Lua side of Envoy's stream handle API, loaded before each script: the objects a script's
 * `envoy_on_request(handle)` / `envoy_on_response(handle)` get, written in Lua so that only
 * their primitives cross to JS (`__host(op, id, …)`, op codes below). What waits (body(),
 * httpCall(), respond()) yields to the driver (./wasm-lua.ts), which resumes the coroutine with
 * the answer, or raises the failure at the script's own line.
 */

/** The synchronous host operations, by code. */
export const HostOp = {
  headerGet: 1,
  headerGetAtIndex: 2,
  headerNumValues: 3,
  headerAdd: 4,
  headerReplace: 5,
  headerRemove: 6,
  headerList: 7,
  log: 8,
  routeMetadata: 9,
  streamInfo: 10,
  dynamicMetadataGet: 11,
  dynamicMetadataSet: 12,
  dynamicMetadataNamespaces: 13,
  ssl: 14,
  bodyIfRead: 15,
  setBody: 16,
  base64: 17,
  now: 18,
  httpCallAsync: 19,
  /** A module file's bytes for require() (nil when there is no such file). */
  readModule: 20,
} as const;

/**
 * Where require() looks, as Envoy's LuaJIT does: relative to the working directory first, then
 * LuaJIT's own directories (LUA_PATH_DEFAULT of LuaJIT 2.1).
 */
export const PACKAGE_PATH = './?.lua;/usr/local/share/luajit-2.1/?.lua;/usr/local/share/lua/5.1/?.lua;/usr/local/share/lua/5.1/?/init.lua';

/** Log levels as the handle's log methods pass them. */
export const LUA_LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'critical'] as const;

const constants = Object.entries(HostOp)
  .map(([k, v]) => `local ${k} = ${v}`)
  .join('\n');

export const PRELUDE = `
local host = __host
__host = nil
local yield, setmetatable, error, type = coroutine.yield, setmetatable, error, type
${constants}

-- require() finds modules on the file system, along package.path, as Envoy's LuaJIT does (the
-- interpreter's own file functions see only an empty in-memory file system).
package.path = ${JSON.stringify(PACKAGE_PATH)}
package.cpath = ''
local function filesystem_searcher(name)
  local file = name:gsub('%.', '/')
  local tried = {}
  for template in package.path:gmatch('[^;]+') do
    local path = template:gsub('%?', file)
    local source = host(readModule, path)
    if source then
      local chunk, err = load(source, '@' .. path)
      if not chunk then error(string.format("error loading module '%s' from file '%s':\\n\\t%s", name, path, err), 0) end
      return chunk, path
    end
    tried[#tried + 1] = "\\n\\tno file '" .. path .. "'"
  end
  return table.concat(tried)
end
package.searchers = { package.searchers[1], filesystem_searcher }

-- os.exit, os.execute and the like reach past the script: they are not there.
if os then os.exit = nil; os.execute = nil; os.remove = nil; os.rename = nil; os.tmpname = nil; os.getenv = nil end
io = nil

local function wait(...)
  local results = table.pack(yield(...))
  if not results[1] then error(results[2], 3) end
  return table.unpack(results, 2, results.n)
end

local Headers = {}
Headers.__index = Headers
function Headers:get(key) return host(headerGet, self.id, self.kind, key) end
function Headers:getAtIndex(key, index) return host(headerGetAtIndex, self.id, self.kind, key, index) end
function Headers:getNumValues(key) return host(headerNumValues, self.id, self.kind, key) end
function Headers:add(key, value) host(headerAdd, self.id, self.kind, key, value) end
function Headers:replace(key, value) host(headerReplace, self.id, self.kind, key, value) end
function Headers:remove(key) host(headerRemove, self.id, self.kind, key) end
function Headers:__pairs()
  local list = { host(headerList, self.id, self.kind) }
  local i = -1
  return function() i = i + 2; if list[i] ~= nil then return list[i], list[i + 1] end end, self, nil
end

local Buffer = {}
Buffer.__index = Buffer
function Buffer:length() return #self.data end
function Buffer:getBytes(index, length)
  if index < 0 or length < 0 or index + length > #self.data then error("index/length must be >= 0 and (index + length) must be <= buffer size", 2) end
  return string.sub(self.data, index + 1, index + length)
end
function Buffer:setBytes(data)
  host(setBody, self.id, self.kind, data)
  self.data = data
  return #data
end

local Metadata = {}
Metadata.__index = Metadata
function Metadata:get(key) return host(routeMetadata, self.id, key) end

local DynamicMetadata = {}
DynamicMetadata.__index = DynamicMetadata
function DynamicMetadata:get(namespace) return host(dynamicMetadataGet, self.id, namespace) end
function DynamicMetadata:set(namespace, key, value) host(dynamicMetadataSet, self.id, namespace, key, value) end
function DynamicMetadata:__pairs()
  local list = { host(dynamicMetadataNamespaces, self.id) }
  local i = 0
  return function()
    i = i + 1
    local ns = list[i]
    if ns ~= nil then return ns, host(dynamicMetadataGet, self.id, ns) end
  end, self, nil
end

local StreamInfo = {}
StreamInfo.__index = StreamInfo
for _, name in ipairs({ "protocol", "downstreamLocalAddress", "downstreamDirectRemoteAddress", "downstreamRemoteAddress", "requestedServerName", "routeName" }) do
  StreamInfo[name] = function(self) return host(streamInfo, self.id, name) end
end
function StreamInfo:dynamicMetadata() return setmetatable({ id = self.id }, DynamicMetadata) end

local Connection = {}
Connection.__index = Connection
function Connection:ssl() if host(ssl, self.id) then return {} end return nil end

local Handle = {}
Handle.__index = Handle
function Handle:headers()
  local h = self._headers
  if not h then h = setmetatable({ id = self.id, kind = self.kind }, Headers); self._headers = h end
  return h
end
-- The body as a Buffer once it has all arrived (nil when there is none: false from the host).
function Handle:body(always_wrap_body)
  local data = host(bodyIfRead, self.id, self.kind)
  if data == nil then data = wait("__op", "body", self.id, self.kind) end
  if data == false then
    if not always_wrap_body then return nil end
    data = ""
  end
  return setmetatable({ id = self.id, kind = self.kind, data = data }, Buffer)
end
function Handle:bodyChunks()
  local body, done = self:body(), false
  return function() if done or body == nil then return nil end; done = true; return body end
end
function Handle:trailers() return nil end
function Handle:metadata() return setmetatable({ id = self.id }, Metadata) end
function Handle:streamInfo() return setmetatable({ id = self.id }, StreamInfo) end
function Handle:connection() return setmetatable({ id = self.id }, Connection) end
function Handle:respond(headers, body) wait("__op", "respond", self.id, headers, body) end
function Handle:httpCall(cluster, headers, body, timeout_ms, asynchronous)
  if type(asynchronous) == "table" then asynchronous = asynchronous.asynchronous end
  if asynchronous then host(httpCallAsync, self.id, cluster, headers, body, timeout_ms); return end
  -- Not a tail call: an error then points at the script's line.
  local response_headers, response_body = wait("__op", "httpCall", self.id, cluster, headers, body, timeout_ms)
  return response_headers, response_body
end
function Handle:base64Escape(s) return host(base64, self.id, s) end
function Handle:timestamp() return host(now, self.id) end
function Handle:timestampString() return string.format("%d", host(now, self.id)) end
for level, name in ipairs({ "logTrace", "logDebug", "logInfo", "logWarn", "logErr", "logCritical" }) do
  Handle[name] = function(self, message) host(log, self.id, level - 1, tostring(message)) end
end

function __entry(kind, id)
  local f
  if kind == 0 then f = envoy_on_request else f = envoy_on_response end
  return f(setmetatable({ id = id, kind = kind }, Handle))
end
`;
