-- Raises the published policy step (never lowers it) and tells every worker.
-- KEYS[1] step, KEYS[2] the policy channel. ARGV[1] the new step.
-- Returns the step now published.
local cur = tonumber(redis.call('GET', KEYS[1]) or '-1')
local new = tonumber(ARGV[1])
if new > cur then
  redis.call('SET', KEYS[1], ARGV[1])
  redis.call('PUBLISH', KEYS[2], ARGV[1])
  return new
end
return cur
