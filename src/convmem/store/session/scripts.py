"""The session tier's Lua scripts: each runs atomically on the Redis server, so a generation
check and what it guards (a fill, a write-through) cannot interleave with another process's.

Generations are random tokens, not counters: a generation key that expired or was flushed comes
back as a new token, so no older cached value can match it again. Writers keys count the write
transactions open on a scope: while one is, readers neither use nor fill the cache."""

from __future__ import annotations

# KEYS: gT wT gU wU gC wC entry userset tenantset
# ARGV: field, new gT, new gU, new gC (used where a generation is missing), gen ttl, entry ttl
# → {gT, gU, gC, busy, entry or ""}
READ = """
local gens = {}
local busy = 0
for i = 0, 2 do
  local g = redis.call('GET', KEYS[2 * i + 1])
  if not g then g = ARGV[i + 2] end
  redis.call('SET', KEYS[2 * i + 1], g, 'EX', ARGV[5])
  gens[i + 1] = g
  if tonumber(redis.call('GET', KEYS[2 * i + 2]) or '0') > 0 then busy = 1 end
end
local entry = redis.call('HGET', KEYS[7], ARGV[1])
if entry then
  redis.call('EXPIRE', KEYS[7], ARGV[6])
  redis.call('EXPIRE', KEYS[8], ARGV[6])
  redis.call('EXPIRE', KEYS[9], ARGV[6])
else
  entry = ''
end
return {gens[1], gens[2], gens[3], busy, entry}
"""

# KEYS: gT wT gU wU gC wC entry userset tenantset
# ARGV: gT gU gC (the generations read before the database), field, payload, entry ttl
# → 1 stored, 0 refused (a generation moved or a writer is open)
FILL = """
for i = 0, 2 do
  if redis.call('GET', KEYS[2 * i + 1]) ~= ARGV[i + 1] then return 0 end
  if tonumber(redis.call('GET', KEYS[2 * i + 2]) or '0') > 0 then return 0 end
end
redis.call('HSET', KEYS[7], ARGV[4], ARGV[5])
redis.call('EXPIRE', KEYS[7], ARGV[6])
for i = 8, 9 do
  redis.call('SADD', KEYS[i], KEYS[7])
  redis.call('EXPIRE', KEYS[i], ARGV[6])
end
return 1
"""

# A write transaction opens on a conversation.
# KEYS: gC wC entry gT wT gU wU;  ARGV: new gC, marker ttl, gen ttl
# → {writers already open (here or on its tenant/user), old gC, gT, gU, entry fields…}
MARK_CONVERSATION = """
local busy = tonumber(redis.call('GET', KEYS[2]) or '0')
redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[2])
local old = redis.call('GET', KEYS[1]) or ''
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
local entry = redis.call('HGETALL', KEYS[3])
redis.call('DEL', KEYS[3])
local gT = redis.call('GET', KEYS[4]) or ''
local gU = redis.call('GET', KEYS[6]) or ''
busy = busy + tonumber(redis.call('GET', KEYS[5]) or '0')
busy = busy + tonumber(redis.call('GET', KEYS[7]) or '0')
local out = {busy, old, gT, gU}
for i = 1, #entry do out[#out + 1] = entry[i] end
return out
"""

# A write transaction opens on a user or a tenant: its cached entries go now.
# KEYS: g w set;  ARGV: new g, marker ttl, gen ttl
MARK_SET = """
redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
for _, key in ipairs(redis.call('SMEMBERS', KEYS[3])) do redis.call('DEL', key) end
redis.call('DEL', KEYS[3])
return 1
"""

# The transaction ended (committed or not): the generation moves again and the entry goes; after
# a commit the writer may put the state it made (a write-through) if nothing else moved since
# its mark. KEYS: gC wC entry gT gU wT wU userset tenantset
# ARGV: gC set at the mark, new gC, gen ttl, gT, gU (at the mark), entry ttl, decrement (1/0),
#       then field, payload pairs → 1 written through, 0 not
UNMARK_CONVERSATION = """
local left
if ARGV[7] == '1' then
  left = redis.call('DECR', KEYS[2])
  if left <= 0 then redis.call('DEL', KEYS[2]) end
else
  left = tonumber(redis.call('GET', KEYS[2]) or '0')
end
local current = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
redis.call('DEL', KEYS[3])
if #ARGV < 9 or left > 0 or current ~= ARGV[1] then return 0 end
if redis.call('GET', KEYS[4]) ~= ARGV[4] or redis.call('GET', KEYS[5]) ~= ARGV[5] then return 0 end
if tonumber(redis.call('GET', KEYS[6]) or '0') > 0 then return 0 end
if tonumber(redis.call('GET', KEYS[7]) or '0') > 0 then return 0 end
for i = 8, #ARGV, 2 do redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1]) end
redis.call('EXPIRE', KEYS[3], ARGV[6])
for i = 8, 9 do
  redis.call('SADD', KEYS[i], KEYS[3])
  redis.call('EXPIRE', KEYS[i], ARGV[6])
end
return 1
"""

# KEYS: g w set;  ARGV: new g, gen ttl, decrement (1/0)
UNMARK_SET = """
if ARGV[3] == '1' then
  if redis.call('DECR', KEYS[2]) <= 0 then redis.call('DEL', KEYS[2]) end
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
for _, key in ipairs(redis.call('SMEMBERS', KEYS[3])) do redis.call('DEL', key) end
redis.call('DEL', KEYS[3])
return 1
"""
