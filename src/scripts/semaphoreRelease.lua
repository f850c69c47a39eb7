-- semaphoreRelease: give back a holder's permit slots (compare-and-delete
-- of each slot that still holds its value), and hand each slot it freed to
-- the first live waiter of the resource's wait line: the slot is reserved
-- for that waiter (set to its value for a short lease, so that an acquirer
-- arriving meanwhile cannot take it) and the waiter is told alone, on its
-- process's channel, and taken out of the line. A release that frees one
-- permit wakes one waiter, however many wait; a release nobody waits for
-- does nothing more.
-- KEYS[1]       the resource's limit record (left alone: it outlives its
--               holders by its own TTL; it names the waiters' channel)
-- KEYS[2..n-2]  the permit slots
-- KEYS[n-1], KEYS[n]  the limit record's wait line and its lease (lineKeys.ts)
-- ARGV[1]       the holder's random value
-- ARGV[2]       the reservation in ms (absent: nobody is woken, as for the
--               undo of an attempt that used up its validity)
-- Returns the number of slots deleted; slots that expired or hold another
-- value are left alone, so releasing an expired permit returns 0.
-- Before Redis 7 a script that reads TIME must replicate its effects, not itself.
-- (line.lua's helpers are put in front of this source.)
if redis.replicate_commands then redis.replicate_commands() end
local value = ARGV[1]
local reservation_ms = ARGV[2]
local line, lease = KEYS[#KEYS - 1], KEYS[#KEYS]
local waited = reservation_ms ~= nil and redis.call('EXISTS', line) == 1
local now_ms, now_us = nil, nil
local freed = 0
for i = 2, #KEYS - 2 do
  if redis.call('GET', KEYS[i]) == value then
    redis.call('DEL', KEYS[i])
    freed = freed + 1
    if waited then
      if not now_ms then now_ms, now_us = server_time() end
      local head = first_live(line, lease, now_ms)
      if head then
        leave_line(line, lease, head)
        redis.call('SET', KEYS[i], head, 'PX', reservation_ms)
        announce_handoff(KEYS[1], head, now_us, reservation_ms)
      end
    end
  end
end
return freed
