-- extend: give every resource a new TTL, only if every one still holds our
-- value (with or without a waiter's trailing '!', see acquire.lua).
-- KEYS[1..n]  the resources
-- ARGV[1]     the lock's random value
-- ARGV[2]     new TTL in milliseconds, counted from now
-- Returns 1 when every key was extended, or 0 when any key is missing or holds
-- another value (nothing is changed then: another holder is never extended).
local value = ARGV[1]
local marked = value .. '!'
local ttl = ARGV[2]

for i = 1, #KEYS do
  local current = redis.call('GET', KEYS[i])
  if current ~= value and current ~= marked then
    return 0
  end
end

for i = 1, #KEYS do
  redis.call('PEXPIRE', KEYS[i], ttl)
end
return 1
