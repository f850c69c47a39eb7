-- acquire: take every resource or none, atomically on this node; with
-- fencing, also hand out the next fencing token of each resource.
-- KEYS[1..n]     the resources
-- KEYS[n+1..2n]  with fencing only: each resource's token counter
-- ARGV[1]        the lock's random value
-- ARGV[2]        TTL in milliseconds
-- ARGV[3]        'fence' to hand out tokens; '' or absent otherwise
-- ARGV[4]        'mark' when the caller waits for a release announcement:
--                the first key found held by another value gets a '!'
--                appended (APPEND keeps its TTL), so that its holder's release
--                announces itself (release.lua); absent otherwise
-- Returns 0 when any key holds another value (nothing but that mark is
-- written then). Otherwise every key now holds the value with the TTL (also
-- when some already held it, marked or not: a retried request whose first
-- reply was lost; a mark is kept), and it returns 1, or with fencing an array
-- of n tokens: each counter is INCRemented and raised to at least the server
-- time in microseconds, so a node restarted empty still hands out tokens
-- above those it gave before (tokens stay below 2^53).
local MARK = '!'
local value = ARGV[1]
local marked = value .. MARK
local ttl = ARGV[2]
local fencing = ARGV[3] == 'fence'
local n = fencing and #KEYS / 2 or #KEYS

local stored = {}
for i = 1, n do
  local current = redis.call('GET', KEYS[i])
  if current and current ~= value and current ~= marked then
    if ARGV[4] == 'mark' and string.sub(current, -1) ~= MARK then
      redis.call('APPEND', KEYS[i], MARK)
    end
    return 0
  end
  stored[i] = current or value
end

local floor
if fencing then
  -- Before Redis 7 a script that reads TIME must replicate its effects, not itself.
  if redis.replicate_commands then redis.replicate_commands() end
  local time = redis.call('TIME')
  floor = tonumber(time[1]) * 1000000 + tonumber(time[2])
end

local tokens = {}
for i = 1, n do
  redis.call('SET', KEYS[i], stored[i], 'PX', ttl)
  if fencing then
    local token = redis.call('INCR', KEYS[n + i])
    if token < floor then
      token = floor
      redis.call('SET', KEYS[n + i], string.format('%.0f', floor))
    end
    tokens[i] = token
  end
end
if fencing then return tokens end
return 1
