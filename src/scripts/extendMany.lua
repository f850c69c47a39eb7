-- extendMany: the renewals of many locks in one call; each lock is extended
-- as extend.lua would (only if every one of its keys still holds its value,
-- with or without a waiter's trailing '!'), and none depends on another.
-- KEYS          every lock's resources, lock after lock
-- ARGV[1]       the layout of what follows: 'same' or 'each'
-- 'same': every lock has one key, all take the same TTL, and all values are
--   of one length in bytes (using()'s locks of one TTL: the usual batch)
--   ARGV[2]     the TTL in milliseconds, counted from now
--   ARGV[3]     the length of each value, in bytes
--   ARGV[4]     the values, lock after lock, joined without a separator
-- 'each': any locks
--   ARGV[3i-1]  the i-th lock's random value
--   ARGV[3i]    its new TTL in milliseconds, counted from now
--   ARGV[3i+1]  how many of KEYS, after the previous locks', are its resources
-- Returns a string of one character per lock, in order: '1' when every key
-- of it was extended, '0' when any was missing or held another value (that
-- lock's keys are left unchanged then: another holder is never extended).
local results = {}

local function holds(key, value)
  local current = redis.call('GET', key)
  return current == value or current == value .. '!'
end

if ARGV[1] == 'same' then
  local ttl = ARGV[2]
  local width = tonumber(ARGV[3])
  local values = ARGV[4]
  for i = 1, #KEYS do
    local key = KEYS[i]
    if holds(key, string.sub(values, (i - 1) * width + 1, i * width)) then
      redis.call('PEXPIRE', key, ttl)
      results[i] = '1'
    else
      results[i] = '0'
    end
  end
  return table.concat(results)
end

local first = 1
for i = 1, (#ARGV - 1) / 3 do
  local value = ARGV[3 * i - 1]
  local ttl = ARGV[3 * i]
  local last = first + tonumber(ARGV[3 * i + 1]) - 1
  local held = '1'
  for k = first, last do
    if not holds(KEYS[k], value) then
      held = '0'
      break
    end
  end
  if held == '1' then
    for k = first, last do
      redis.call('PEXPIRE', KEYS[k], ttl)
    end
  end
  results[i] = held
  first = last + 1
end
return table.concat(results)
