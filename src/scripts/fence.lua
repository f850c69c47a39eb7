-- fence: raise each resource's token counter to at least the given token,
-- while this node still holds the lock (our value, with or without a waiter's
-- trailing '!', see acquire.lua). Redlock writes the quorum's largest
-- token back this way, so the next holder's quorum is sure to see it.
-- KEYS[1..n]     the resources
-- KEYS[n+1..2n]  each resource's token counter
-- ARGV[1]        the lock's random value
-- ARGV[2..n+1]   the token of each resource
-- Returns 1 when every key holds the value (counters raised), else 0
-- (nothing changed).
local value = ARGV[1]
local marked = value .. '!'
local n = #KEYS / 2

for i = 1, n do
  local current = redis.call('GET', KEYS[i])
  if current ~= value and current ~= marked then
    return 0
  end
end

for i = 1, n do
  local token = tonumber(ARGV[i + 1])
  local current = tonumber(redis.call('GET', KEYS[n + i])) or 0
  if token > current then
    redis.call('SET', KEYS[n + i], ARGV[i + 1])
  end
end
return 1
