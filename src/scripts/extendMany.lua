-- extendMany: the renewals of many locks in one call; each lock is extended
-- as extend.lua would (only if every one of its keys still holds its value,
-- with or without a waiter's trailing '!'), and none depends on another.
-- KEYS          every lock's resources, lock after lock
-- ARGV[3i-2]    the i-th lock's random value
-- ARGV[3i-1]    its new TTL in milliseconds, counted from now
-- ARGV[3i]      how many of KEYS, after the previous locks', are its resources
-- Returns one integer per lock, in order: 1 when every key of it was
-- extended, 0 when any was missing or held another value (that lock's keys
-- are left unchanged then: another holder is never extended).
local results = {}
local first = 1
for i = 1, #ARGV / 3 do
  local value = ARGV[3 * i - 2]
  local marked = value .. '!'
  local ttl = ARGV[3 * i - 1]
  local last = first + tonumber(ARGV[3 * i]) - 1
  local held = 1
  for k = first, last do
    local current = redis.call('GET', KEYS[k])
    if current ~= value and current ~= marked then
      held = 0
      break
    end
  end
  if held == 1 then
    for k = first, last do
      redis.call('PEXPIRE', KEYS[k], ttl)
    end
  end
  results[i] = held
  first = last + 1
end
return results
