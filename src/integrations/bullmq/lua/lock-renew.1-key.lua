-- Renews the coordinator lock while this coordinator holds it.
-- KEYS[1] lock. ARGV[1] this coordinator's token, ARGV[2] time to live in ms.
-- Returns 1 when renewed, 0 when another holds it (or nobody).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
