-- renewEach: the renewals of many holders of one primitive in one call, each
-- exactly as that primitive's extend script renews one holder alone: its
-- source is put in front of this one as the body of
-- renew_one(KEYS, ARGV), which sees only that holder's keys and arguments.
-- No renewal depends on another.
-- KEYS              every holder's keys, holder after holder
-- ARGV[1]           how many arguments each holder has (A)
-- then per holder   how many of KEYS, after the previous holders', are its
--                   keys, followed by its A arguments
-- Returns a string of one character per holder, in order: '1' when
-- renew_one answered 1, else '0' (that holder's keys are left as renew_one
-- leaves them when it refuses: unchanged).
local per_holder = tonumber(ARGV[1])
local results = {}
local first_key = 1
local at = 2
local holder = 0
while at <= #ARGV do
  holder = holder + 1
  local key_count = tonumber(ARGV[at])
  local keys = { unpack(KEYS, first_key, first_key + key_count - 1) }
  local args = { unpack(ARGV, at + 1, at + per_holder) }
  results[holder] = renew_one(keys, args) == 1 and '1' or '0'
  first_key = first_key + key_count
  at = at + 1 + per_holder
end
return table.concat(results)
