-- semaphoreRelease: give back a holder's permit slots (compare-and-delete
-- of each slot that still holds its value), and hand each freed slot to the
-- next live waiter of the resource's wait line (one node: ARGV[2] > 0): the
-- slot is set to that waiter's value and '~' for a short reservation and the
-- waiter is told alone (line.lua's announce_handoff, on the limit record's
-- channel), so that its next attempt (semaphoreTake.lua) takes it, and no
-- caller that did not wait can take it first. On several nodes each freed
-- slot wakes the next waiter instead. A release nobody waits for does
-- nothing more.
-- KEYS[1]       the resource's limit record (kept alive for as long as a
--               reservation lasts; it names the waiters' channel)
-- KEYS[2..n-2]  the permit slots
-- KEYS[n-1], KEYS[n]  the limit record's wait line and its lease (lineKeys.ts)
-- ARGV[1]       the holder's random value
-- ARGV[2]       the reservation in ms (line.ts's RESERVATION_MS): a waiter
--               that died or paused holds the slot no longer than this;
--               '0': no slot is reserved, each freed slot wakes the next
--               waiter (out of the line, line.lua's wake_heads) to try
-- ARGV[3], [4]  the undo of a failed try from the line: the caller's ticket
--               and lease ms, to put it back in its place before any handoff
--               (line.lua's stand_in_line), so that a slot it gives back may
--               come straight back to it, first in line, as a reservation
-- Returns the number of slots deleted; slots that expired or hold another
-- value are left alone, so releasing an expired permit returns 0.
--
-- Why a reservation keeps the slot rule (README, "Semaphore"): the slot key
-- still holds one value at a time. The holder's value is gone before the
-- reservation is written; a reservation matches no holder's value (its '~'),
-- so no extend or release of a permit touches it; and only the waiter's own
-- acquire (semaphoreTake.lua: a slot reserved for the caller counts as its
-- own) turns it into a permit, through the engine's grant: the SET with the
-- caller's TTL, validity counted from before the request, minus drift. A
-- reservation is no permit, so permits stay at most one per slot.
-- (line.lua's helpers are put in front of this source, defined only to hand off.)
if redis.replicate_commands then redis.replicate_commands() end
local value = ARGV[1]
local reservation = ARGV[2]
local line, lease = KEYS[#KEYS - 1], KEYS[#KEYS]
local freed = {}
for i = 2, #KEYS - 2 do
  if redis.call('GET', KEYS[i]) == value then
    redis.call('DEL', KEYS[i])
    freed[#freed + 1] = KEYS[i]
  end
end
local rejoin = ARGV[3]
if rejoin or (#freed > 0 and redis.call('EXISTS', line) == 1) then
  line_helpers()
  local now_ms, now_us = server_time()
  if rejoin then stand_in_line(line, lease, value, rejoin, ARGV[4], now_ms, now_us) end
  if #freed == 0 then return 0 end
  if reservation == '0' then
    wake_heads(KEYS[1], line, lease, #freed, now_ms, now_us)
    return #freed
  end
  local handed = false
  for _, slot in ipairs(freed) do
    local head = first_live(line, lease, now_ms)
    if not head then break end
    leave_line(line, lease, head)
    redis.call('SET', slot, head .. '~', 'PX', reservation)
    announce_handoff(KEYS[1], head, now_us, 0)
    handed = true
  end
  -- The record outlives the reservations, as it outlives every slot.
  if handed and redis.call('PTTL', KEYS[1]) < tonumber(reservation) then
    redis.call('PEXPIRE', KEYS[1], 2 * tonumber(reservation))
  end
end
return #freed
