/**
 * An embedded Lua VM (wasmoon: Lua 5.4 in WebAssembly, 64-bit integers) that
 * runs scripts as Redis does: each compiled once and kept by its SHA1, with
 * KEYS and ARGV as strings, `redis.call`/`redis.pcall` sent to a host (the
 * node's keyspace), `redis.error_reply`/`redis.status_reply`, globals that
 * a script can read but not write, and the reply converted by Redis's rules
 * (a number is truncated to an integer, false is nil, true is 1, a table is
 * an array up to its first nil, `{err=…}` an error and `{ok=…}` a status).
 *
 * One VM serves every node of the process: a script runs to its end without
 * yielding, and its commands go to the host it was started with.
 *
 * wasmoon over fengari: the same spike script (GET, TIME, SET) ran at about
 * 55k evals/s on wasmoon against 45k on fengari, whose 32-bit integers turn
 * TIME's microseconds (1700000000123000) into 404758648.
 */
import type { LuaWasm } from 'wasmoon';
import { holdProcessOpen } from '../keepAlive.js';
import { errorReply, formatLuaNumber, isError, isStatus, type Reply } from './replies.js';

/** What a script's redis.call reaches: one command, its arguments as strings. */
export type CommandHost = (args: readonly string[]) => Reply;

const LUA_REGISTRYINDEX = -1_000_000 - 1000;
/** lua_type's answers (lua.h). */
const LuaType = { Nil: 0, Boolean: 1, Number: 3, String: 4, Table: 5 } as const;

/**
 * Sets up `redis`, the global table scripts see (read-only: a proxy over
 * the libraries Redis offers) and the runner. Lua 5.1 spellings that
 * scripts written for Redis may use (unpack) are there too.
 */
const BOOTSTRAP = `
local call_host = ...
local error, pcall, select, setmetatable, tostring, type, load = error, pcall, select, setmetatable, tostring, type, load

local redis = {
  LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
  REPL_NONE = 0, REPL_AOF = 1, REPL_SLAVE = 2, REPL_REPLICA = 2, REPL_ALL = 3,
}
function redis.call(...)
  local reply, failed = call_host(...)
  if failed then error(reply, 0) end
  return reply
end
function redis.pcall(...)
  return (call_host(...))
end
function redis.error_reply(message)
  if type(message) ~= 'string' then error('wrong number or type of arguments', 2) end
  return { err = message }
end
function redis.status_reply(message)
  if type(message) ~= 'string' then error('wrong number or type of arguments', 2) end
  return { ok = message }
end
function redis.log() end
function redis.replicate_commands() return true end
function redis.set_repl() end

-- Redis's Lua 5.1 reads a string as a number with C's strtod, which takes
-- 'inf', 'infinity' and 'nan' in any case (ZSCORE answers 'inf' for an
-- infinite score); Lua 5.4's tonumber refuses them.
local native_tonumber, lower, match, huge = tonumber, string.lower, string.match, math.huge
local function tonumber_51(value, base)
  local number = native_tonumber(value, base)
  if number ~= nil or base ~= nil or type(value) ~= 'string' then return number end
  local sign, word = match(lower(value), '^%s*([+-]?)(%a+)%s*$')
  if word == 'inf' or word == 'infinity' then return sign == '-' and -huge or huge end
  if word == 'nan' then return 0 / 0 end
  return nil
end

local offered = {
  redis = redis, string = string, math = math, table = table, coroutine = coroutine,
  assert = assert, error = error, ipairs = ipairs, next = next, pairs = pairs, pcall = pcall,
  rawequal = rawequal, rawget = rawget, rawset = rawset, select = select, setmetatable = setmetatable,
  getmetatable = getmetatable, tonumber = tonumber_51, tostring = tostring, type = type,
  unpack = table.unpack, xpcall = xpcall, _VERSION = 'Lua 5.1',
}
local globals = setmetatable({}, {
  __index = function(_, name)
    local value = offered[name]
    if value == nil then error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2) end
    return value
  end,
  __newindex = function(_, name)
    error("Attempt to modify a readonly table: script attempted to create global variable '" .. tostring(name) .. "'", 2)
  end,
  __metatable = false,
})
offered._G = globals

local function compile(source)
  return load('return function(KEYS, ARGV) ' .. source .. '\\nend', '@user_script', 't', globals)
end

local function run(script, key_count, ...)
  local all = { ... }
  local keys, argv = {}, {}
  for i = 1, key_count do keys[i] = all[i] end
  for i = key_count + 1, select('#', ...) do argv[i - key_count] = all[i] end
  return pcall(script, keys, argv)
end

return compile, run
`;

/**
 * Redis replies with `(long long)` of a Lua number: truncated toward zero,
 * and on x86-64 the "integer indefinite" INT64_MIN for an infinity, NaN or
 * anything past 64 bits (C leaves it undefined; that is what the cast gives).
 */
function castToLongLong(value: number): number {
  const truncated = Math.trunc(value);
  return Number.isFinite(truncated) && Math.abs(truncated) < 2 ** 63 ? truncated : -(2 ** 63);
}

type Lua = LuaWasm;
type LuaState = number;

let loading: Promise<LuaVm> | undefined;
let loaded: LuaVm | undefined;

/** One compiled script, kept in the VM's registry. */
export interface CompiledScript {
  readonly ref: number;
}

export class LuaVm {
  readonly #lua: Lua;
  readonly #L: LuaState;
  readonly #compileRef: number;
  readonly #runRef: number;
  readonly #compiled = new Map<string, CompiledScript | { readonly error: string }>();
  /** The host of the script running now (scripts do not nest). */
  #host: CommandHost | undefined;

  /** The process's VM, loaded (WebAssembly compiled) at the first call. */
  static load(): Promise<LuaVm> {
    if (loading) return loading;
    // Compiling WebAssembly holds no handle of the event loop: a script whose
    // top-level await waits on the first request would end in the middle.
    const letGo = holdProcessOpen();
    loading = import('wasmoon').then(async ({ LuaFactory }) => (loaded = new LuaVm(await new LuaFactory().getLuaModule())));
    loading.then(letGo, letGo);
    return loading;
  }

  /** The VM once loaded, else undefined (a request then waits for load()). */
  static get loaded(): LuaVm | undefined {
    return loaded;
  }

  private constructor(lua: Lua) {
    this.#lua = lua;
    const L = lua.luaL_newstate();
    this.#L = L;
    lua.luaL_openlibs(L);
    const callHost = lua.module.addFunction((state: LuaState) => this.#callHost(state), 'ii');
    if (lua.luaL_loadstring(L, BOOTSTRAP) !== 0) throw new Error(`the Lua bootstrap does not compile: ${lua.lua_tolstring(L, -1, null)}`);
    lua.lua_pushcclosure(L, callHost, 0);
    if (lua.lua_pcallk(L, 1, 2, 0, 0, null) !== 0) throw new Error(`the Lua bootstrap failed: ${lua.lua_tolstring(L, -1, null)}`);
    this.#runRef = lua.luaL_ref(L, LUA_REGISTRYINDEX);
    this.#compileRef = lua.luaL_ref(L, LUA_REGISTRYINDEX);
  }

  /** The script compiled once per source, or the error reply Redis gives for a script that does not compile. */
  compile(sha: string, source: string): CompiledScript | { readonly error: string } {
    const known = this.#compiled.get(sha);
    if (known !== undefined) return known;
    const lua = this.#lua;
    const L = this.#L;
    lua.lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(this.#compileRef));
    lua.lua_pushstring(L, source);
    lua.lua_callk(L, 1, 2, 0, null);
    let compiled: CompiledScript | { readonly error: string };
    if (Number(lua.lua_type(L, -2)) === LuaType.Nil) {
      compiled = { error: `ERR Error compiling script (new function): ${lua.lua_tolstring(L, -1, null)}` };
      lua.lua_settop(L, 0);
    } else {
      // The chunk returns the script's function.
      lua.lua_settop(L, -2);
      lua.lua_callk(L, 0, 1, 0, null);
      compiled = { ref: lua.luaL_ref(L, LUA_REGISTRYINDEX) };
      lua.lua_settop(L, 0);
    }
    this.#compiled.set(sha, compiled);
    return compiled;
  }

  /** Runs a compiled script to its end; its commands go to `host`. */
  run(script: CompiledScript, keys: readonly string[], args: readonly string[], host: CommandHost): Reply {
    const lua = this.#lua;
    const L = this.#L;
    lua.lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(this.#runRef));
    lua.lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(script.ref));
    lua.lua_pushinteger(L, BigInt(keys.length));
    for (const key of keys) lua.lua_pushstring(L, key);
    for (const arg of args) lua.lua_pushstring(L, arg);
    this.#host = host;
    try {
      lua.lua_callk(L, 2 + keys.length + args.length, 2, 0, null);
      if (lua.lua_toboolean(L, -2) !== 0) return this.#read(-1);
      return this.#raised(-1);
    } finally {
      this.#host = undefined;
      lua.lua_settop(L, 0);
    }
  }

  /** What an error a script raised answers: a redis.call error as it was, anything else as ERR. */
  #raised(index: number): Reply {
    const lua = this.#lua;
    const L = this.#L;
    if (Number(lua.lua_type(L, index)) === LuaType.Table) {
      const reply = this.#read(index);
      if (isError(reply)) return reply;
    }
    const message = Number(lua.lua_type(L, index)) === LuaType.String ? lua.lua_tolstring(L, index, null) : 'an error object that is not a string';
    return errorReply(`ERR ${message}`);
  }

  /** A Lua value as Redis converts a script's reply (script_lua.c, luaReplyToRedisReply). */
  #read(index: number): Reply {
    const lua = this.#lua;
    const L = this.#L;
    switch (Number(lua.lua_type(L, index))) {
      case LuaType.String:
        return lua.lua_tolstring(L, index, null);
      case LuaType.Number:
        return lua.lua_isinteger(L, index) !== 0 ? Number(lua.lua_tointegerx(L, index, null)) : castToLongLong(lua.lua_tonumberx(L, index, null));
      case LuaType.Boolean:
        return lua.lua_toboolean(L, index) !== 0 ? 1 : null;
      case LuaType.Table:
        return this.#readTable(lua.lua_absindex(L, index));
      default:
        return null;
    }
  }

  #readTable(at: number): Reply {
    const lua = this.#lua;
    const L = this.#L;
    for (const field of ['err', 'ok'] as const) {
      lua.lua_pushstring(L, field);
      if (lua.lua_rawget(L, at) === LuaType.String) {
        const message = lua.lua_tolstring(L, -1, null);
        lua.lua_settop(L, -2);
        return field === 'err' ? errorReply(message) : { status: message };
      }
      lua.lua_settop(L, -2);
    }
    const items: Reply[] = [];
    for (let i = 1; ; i++) {
      if (Number(lua.lua_rawgeti(L, at, BigInt(i))) === LuaType.Nil) break;
      items.push(this.#read(-1));
      lua.lua_settop(L, -2);
    }
    lua.lua_settop(L, -2);
    return items;
  }

  /**
   * redis.call's way in: the arguments as Redis sends them, the command run
   * on the host, its reply pushed as Redis converts it (redisProtocolToLuaType),
   * and a second value `true` when it is an error (redis.call raises it).
   * Nothing may throw here: a JS exception would unwind through the VM.
   */
  #callHost(L: LuaState): number {
    const lua = this.#lua;
    let reply: Reply;
    try {
      reply = this.#dispatch(L);
    } catch (error) {
      reply = errorReply(`ERR ${error instanceof Error ? error.message : String(error)}`);
    }
    lua.lua_settop(L, 0);
    this.#push(L, reply);
    if (!isError(reply)) return 1;
    lua.lua_pushboolean(L, 1);
    return 2;
  }

  #dispatch(L: LuaState): Reply {
    const lua = this.#lua;
    const count = lua.lua_gettop(L);
    if (count === 0) return errorReply('ERR Please specify at least one argument for this redis lib call');
    const args: string[] = [];
    for (let i = 1; i <= count; i++) {
      const type = Number(lua.lua_type(L, i));
      if (type === LuaType.String) args.push(lua.lua_tolstring(L, i, null));
      else if (type === LuaType.Number) args.push(lua.lua_isinteger(L, i) !== 0 ? String(lua.lua_tointegerx(L, i, null)) : formatLuaNumber(lua.lua_tonumberx(L, i, null)));
      else return errorReply('ERR Lua redis lib command arguments must be strings or integers');
    }
    const host = this.#host;
    if (host === undefined) return errorReply('ERR redis.call outside a script');
    return host(args);
  }

  #push(L: LuaState, reply: Reply): void {
    const lua = this.#lua;
    if (typeof reply === 'string') lua.lua_pushstring(L, reply);
    else if (typeof reply === 'number') lua.lua_pushinteger(L, BigInt(reply));
    else if (reply === null) lua.lua_pushboolean(L, 0);
    else if (Array.isArray(reply)) {
      lua.lua_createtable(L, reply.length, 0);
      reply.forEach((item: Reply, i) => {
        this.#push(L, item);
        lua.lua_rawseti(L, -2, BigInt(i + 1));
      });
    } else {
      lua.lua_createtable(L, 0, 1);
      const single = reply as Exclude<Reply, string | number | null | readonly Reply[]>;
      lua.lua_pushstring(L, isStatus(single) ? single.status : single.error);
      lua.lua_setfield(L, -2, isStatus(single) ? 'ok' : 'err');
    }
  }
}
