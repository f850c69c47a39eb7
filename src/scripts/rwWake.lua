-- rwWake: the read-write lock's wake-up rule, shared by its release scripts
-- (put after line.lua's helpers, in front of their source). It has no KEYS
-- or ARGV of its own. Returns nothing itself: wake_next_writer takes a
-- resource's writer key (it names the writers' channel), its waiting
-- writer's claim, and the writers' wait line and lease.

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
