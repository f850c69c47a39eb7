-- rwWake: the read-write lock's wake-up rule, shared by its release scripts
-- (put after line.lua's helpers, in front of their source). It has no KEYS
-- or ARGV of its own. Returns nothing itself: wake_next_writer takes a
-- resource's writer key (it names the writers' channel), its waiting
-- writer's claim, and the writers' wait line and lease; grant_readers the
-- readers' set (it names the readers' channel), their line and its lease.

-- The next writer may now enter: the claimant, if a writer's claim stands
-- (only it may: the claim holds back every other writer and every reader),
-- else the first live writer of the line.
local function wake_next_writer(writer, claim, line, lease, now_ms, now_us)
  local claimant = redis.call('GET', claim)
  if claimant then
    announce_handoff(writer, claimant, now_us, 0)
    return
  end
  wake_heads(writer, line, lease, 1, now_ms, now_us)
end

-- Every live reader of the line gets a lease of reservation_ms in the
-- readers' set, out of the line, and is told alone with that reservation
-- (announce_handoff): a quorum of such handoffs after its last attempt is
-- its read lock (handoffGrant.ts), which its claim renews with its TTL
-- (rwRead.lua). Readers share, so all of them at once, where a wake would
-- send them to race the next writer one attempt each. Returns how many.
local function grant_readers(readers, line, lease, reservation_ms, now_ms, now_us)
  local granted = 0
  while true do
    local head = first_live(line, lease, now_ms)
    if not head then break end
    leave_line(line, lease, head)
    redis.call('ZADD', readers, now_ms + reservation_ms, head)
    announce_handoff(readers, head, now_us, reservation_ms)
    granted = granted + 1
  end
  if granted > 0 and redis.call('PTTL', readers) < reservation_ms then
    redis.call('PEXPIRE', readers, reservation_ms)
  end
  return granted
end
