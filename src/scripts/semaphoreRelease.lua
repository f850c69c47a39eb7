-- semaphoreRelease: give back a holder's permit slots (compare-and-delete
-- of each slot that still holds its value), and wake as many waiters of the
-- resource's wait line as slots it freed, each on its own (line.lua's
-- wake_heads): a release that frees one permit wakes one waiter, however
-- many wait, and a release nobody waits for does nothing more.
-- KEYS[1]       the resource's limit record (left alone: it outlives its
--               holders by its own TTL; it names the waiters' channel)
-- KEYS[2..n-2]  the permit slots
-- KEYS[n-1], KEYS[n]  the limit record's wait line and its lease (lineKeys.ts)
-- ARGV[1]       the holder's random value
-- Returns the number of slots deleted; slots that expired or hold another
-- value are left alone, so releasing an expired permit returns 0.
-- Before Redis 7 a script that reads TIME must replicate its effects, not itself.
-- (line.lua's helpers are put in front of this source, defined only to wake.)
if redis.replicate_commands then redis.replicate_commands() end
local value = ARGV[1]
local line, lease = KEYS[#KEYS - 1], KEYS[#KEYS]
local freed = 0
for i = 2, #KEYS - 2 do
  if redis.call('GET', KEYS[i]) == value then
    redis.call('DEL', KEYS[i])
    freed = freed + 1
  end
end
if freed > 0 and redis.call('EXISTS', line) == 1 then
  line_helpers()
  local now_ms, now_us = server_time()
  wake_heads(KEYS[1], line, lease, freed, now_ms, now_us)
end
return freed
