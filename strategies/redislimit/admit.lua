-- rlcheck: check every rule of one limiter, then record the call in all of
-- them or in none. The keys, all in the hash slot of the key name's {tag}:
--
-- KEYS[1], the head: a hash holding n, the number of calls counted since
--   the state was made (which says the state is there and how recent it
--   is); per bucketed rule, its running totals and the ends of its bound
--   (see "Bucketed rules" below); and m and a, the last member counted and
--   its record time, when no rule is exact. While every limiter of the key
--   is held back after a loss it is the string 'lost' instead.
-- KEYS[1+i], rule i's key: for an exact rule, the one sorted set of every
--   exact rule of the limiter (so every exact rule names the same key),
--   whose scores are integer microseconds and where every call brings a
--   member of its own; for a bucketed rule, a hash of the counts of its
--   older buckets, which only a call that changes buckets touches.
--
-- So a call under bucketed rules reads and writes a few fields of the
-- head (one HMGET, one HSET); exact rules add one ZRANGE each and one
-- ZADD; and a call of exact rules alone counts itself in the head with
-- one HINCRBY.
--
-- The copies of this script differ only in the line between BEGIN
-- CONSTANTS and END CONSTANTS, which limiter.go writes: the clock. Every
-- other value comes in ARGV,
-- so limiters of any rules share a copy, and the server's script cache
-- holds one per time source whatever the number of tenants and rules.
--
-- ARGV[1] the call's member;
-- ARGV[2] '1' to sweep the sorted set of its expired entries and look for
--   entries from the far future, else '0'; or, for a call that takes a
--   lease, 'L', the same '1' or '0', then ',' and the in-flight cap (0 for
--   none), the lease in µs and the longest wait in µs for a lease to free,
--   joined by ','; or, for a settlement, 'S', its check and record times
--   in µs joined by ',', a space, and the member as settled (see "Leases
--   and settlements": the last key is then the lease set);
-- ARGV[3] the head's count n as the caller last saw it while the caller
--   knows the head must exist, else '0';
-- ARGV[4] '1' to refresh every key's expiry when the call is recorded;
-- then, under a caller's clock only, the check time and the record time,
--   both integer microseconds; then the lease by which key expiries are
--   set, in ms; then, from ARGV[v] (v is 6, or 8 under a caller's clock):
-- ARGV[v] how far ahead of the check time, in microseconds, an entry may
--   lie before the state counts as corrupt;
-- ARGV[v+1] empty when any entry of the call's member is this call's own
--   (the prefix is random), else, for server time, how many microseconds
--   after its own record a retry of the call may run;
-- ARGV[v+2] the largest skew in microseconds allowed between a caller's
--   check time and TIME, or empty for no check;
-- ARGV[v+3] the limiter's configuration: its time source and its rules as
--   kept (limits, units, windows, kinds, margins, bookkeeping), which every
--   limiter of the key must share (see "Configuration");
-- ARGV[v+4] how long, in microseconds of the script's clock, every limiter
--   of the key is held back after this call finds the state lost, 0 for
--   no hold (see "Lost state");
-- ARGV[v+5+3(i-1)] on, three per rule i: minus its limit (the rank to
--   read) for an exact rule, its limit for a bucketed, fixed or bucket
--   one; its window in microseconds; its bucket width in microseconds, 0
--   for an exact rule, or for a fixed rule 'f' and its offset, ',', its
--   margin, for a bucket rule 'k' and its capacity times its window less
--   the margin's refill, ',', the time it takes to fill from empty (see
--   "Fixed and bucket rules" below);
-- then the name of the head's field holding the state of each bucketed,
--   fixed or bucket rule in turn (see "State fields");
-- then, only from a limiter with cost rules, two per rule i: what the
--   call costs in it (1 for a call rule), and the index from 1 of its
--   unit among the costs the member carries, or 0 for a call rule.
-- A cost rule's member ends with '|' and the call's costs, one per unit,
-- joined by ',': an exact cost rule sums the costs of its unit over the
-- entries in its window; a bucketed one counts costs in its buckets.
-- Reply: {record time, n} when the call is recorded (now, or by an
-- earlier attempt of the same call); else {wait, check, rule, n}: nothing
-- was recorded, and rule i asks for the longest wait (rule n+1: the
-- in-flight cap, for a call that takes a lease). A settlement replies
-- {1, check time} when it freed a live lease and corrected the rules at
-- that instant (µs), else {0}. Errors start with a
-- code the client maps: WRONGTYPE, SKEW, CORRUPT, LOST, HELD, CLASH.
--
-- Lua numbers are doubles: epoch microseconds (< 2^53) are exact in them,
-- but Lua's tostring and '..' print only 14 significant digits, and
-- redis.call prints a number argument with printf (slow, and changed
-- between Redis versions); so every value goes to Redis as a string, times
-- made with %d.
--
-- Each argument, table, closure and new string costs a run about as much
-- as a simple Redis command (docs/redis.md, Layout): so the common path
-- makes none it can avoid, values that follow from others (key expiries,
-- the set's keep) are worked out where a rare path needs them, and the
-- functions of rare paths are made only when a run takes them.

-- BEGIN CONSTANTS
local serverTime, virtual = true, false
-- END CONSTANTS

local call, format = redis.call, string.format
local head = KEYS[1]

-- Every number the script writes in a state is an integer below 2^53 in
-- size, where doubles are exact, within bounds the rule sets (a count
-- from 0 to its limit, say). whole tells such a number from NaN,
-- infinities, fractions and absurd values; anything else in a state was
-- not written by the script, and a call on it is refused (CORRUPT), never
-- admitted on it: a count of -100 in a fixed rule of 3 would admit 103.
local MAXN = 9007199254740991 -- 2^53 - 1
local function whole(x, lo, hi)
  return type(x) == 'number' and x >= lo and x <= hi and math.floor(x) == x
end
local function corrupt(key, what)
  return redis.error_reply('CORRUPT key ' .. key .. ' holds ' .. what .. ': delete the key')
end
-- far is the reply for an entry or bucket at score µs, far ahead of the
-- check time (an infinite one too).
local function far(key, what, score, check)
  return redis.error_reply(format('CORRUPT key %s holds %s at %.0f µs, %.0f s ahead of the script clock (%d µs): delete the key',
    key, what, score, math.floor((score - check) / 1000000), check))
end
local mode = string.byte(ARGV[2]) -- '0', '1', 'L' (76) or 'S' (83)
local n = #KEYS - 1
if mode > 49 then n = n - 1 end -- the last key is the lease set
local sweepOn = ARGV[2] == '1' or (mode == 76 and string.byte(ARGV[2], 2) == 49)
local v = 6
if not serverTime then v = 8 end
local ahead = ARGV[v] + 0
local cfg = ARGV[v + 3]
local rb = v + 2 -- rule i's three values are ARGV[rb + 3i] to ARGV[rb + 3i + 2]
local hs = rb + 3 + 3 * n -- the first bucketed rule's state field name
-- Under server time the record's text is made from TIME's own digits
-- when a write needs it: string.format costs as much as a Redis command.
local check, record, at, time
if serverTime then
  time = call('TIME')
  check = time[1] * 1000000 + time[2]
  at = check
else
  check = ARGV[5] + 0
  record = ARGV[6]
  at = record + 0
  local maxSkew = tonumber(ARGV[v + 2])
  if maxSkew then
    local t = call('TIME')
    local skew = check - (t[1] * 1000000 + t[2])
    if math.abs(skew) > maxSkew then
      local way = 'ahead of'
      if skew < 0 then way = 'behind' end
      return redis.error_reply(format('SKEW the client clock is %d µs %s Redis TIME, more than the %d µs allowed',
        math.abs(skew), way, maxSkew))
    end
  end
end

-- State fields. Each bucketed, fixed or bucket rule keeps its state in one
-- field of the head, named in ARGV: four numbers, read and
-- written whole, which spares the run a field name per number. A bucketed
-- rule's are t, b, f and l (see "Bucketed rules"), a fixed or bucket
-- rule's t, 0, 0 and l; every one an integer below 2^53, exact in a
-- double. Redis packs them as little-endian doubles with its struct
-- library (32 bytes), sparing a text conversion per number too; the
-- embedded server, which has no struct library, writes them as text,
-- joined by commas. state returns the four numbers of a field read, nothing for an absent field, or false and an error reply for a
-- field this script did not write; pack makes a field.
local struct = rawget(_G, 'struct')
local function state(f)
  if not f then return end
  local t, b, first, l
  if struct then
    if #f == 32 then t, b, first, l = struct.unpack('<dddd', f) end
  else
    t, b, first, l = string.match(f, '^(%-?%d+),(%-?%d+),(%-?%d+),(%-?%d+)$')
    if l then t, b, first, l = t + 0, b + 0, first + 0, l + 0 end
  end
  if l then
    local probe = t + b + first + l
    -- 'nan' and 'inf' unpack too; x - x is 0 only for a finite x.
    if probe - probe == 0 then return t, b, first, l end
  end
  return false, redis.error_reply('CORRUPT key ' .. head .. ' holds a rule state that is not four finite numbers: delete the key')
end
local function pack(t, b, first, l)
  if struct then return struct.pack('<dddd', t, b, first, l) end
  return format('%d,%d,%d,%d', t, b, first, l)
end

-- life returns how long, in ms, a key of window w (µs) lives after a
-- refresh: the window (at least a day on virtual time, which Redis
-- expiry does not follow) and two leases. The head lives as long as the
-- longest of its rules' keys (w nil). Made only by a run that needs it.
local life
local function makeLife()
  local lease = ARGV[v - 1] + 0
  return function(w)
    if not w then
      w = 0
      for i = 1, n do
        w = math.max(w, tonumber(ARGV[rb + 3 * i + 1]))
        local spec = ARGV[rb + 3 * i + 2]
        if string.byte(spec) == 107 then w = math.max(w, tonumber(string.match(spec, ',(%d+)$'))) end
      end
    end
    if virtual then w = math.max(w, 86400000000) end
    return format('%d', math.ceil(w / 1000) + 2 * lease)
  end
end

-- Leases and settlements. A call that takes a lease (a reservation, or
-- any call under an in-flight cap) is recorded as any other and, in the
-- same run, adds its member to the lease set, scored with the end of its
-- lease in µs; while the cap's number of leases are live, a call waits
-- for the first to end, or for the longest wait the caller allows, as
-- a settlement may free one sooner. A settlement removes the lease and
-- corrects, in one run, each cost rule by what the call's actual cost
-- differs from its estimate (given per rule where a call gives its
-- costs): the exact set's entry takes the settled member (its costs), a
-- fixed rule's count changes while its window is the call's, a bucketed
-- rule's count while the call's bucket is in the bound, and a bucket
-- rule's level, refilled to the check time, takes the difference, never
-- above its capacity and possibly below empty. A lease already removed,
-- or ended, settles nothing: a retry changes nothing, and a call never
-- settled keeps its estimate for good once its lease ends.
if mode == 83 then
  local leases = KEYS[#KEYS]
  local ends = call('ZSCORE', leases, ARGV[1])
  if not ends then return {0} end
  call('ZREM', leases, ARGV[1])
  if ends + 0 <= check then return {0} end
  local c0, r0, settled = string.match(ARGV[2], '^S(%-?%d+),(%-?%d+) (.+)$')
  c0, r0 = c0 + 0, r0 + 0
  local nb = 0
  for i = 1, n do
    if ARGV[rb + 3 * i + 2] ~= '0' then nb = nb + 1 end
  end
  local wt = hs + nb
  local got = {}
  if nb > 0 then
    got = redis.pcall('HMGET', head, unpack(ARGV, hs, hs + nb - 1))
    if got.err then return {0} end -- no hash of counts: the state is gone
  end
  local set, k, j, moved = {}, 0, 0, false
  for i = 1, n do
    local p = rb + 3 * i
    local spec, w, limit = ARGV[p + 2], ARGV[p + 1] + 0, ARGV[p] + 0
    local d = ARGV[wt + 2 * i - 2] + 0
    if spec ~= '0' then j = j + 1 end
    if d ~= 0 and spec == '0' and not moved then
      moved = true -- every exact rule keeps the one set
      local s = call('ZSCORE', KEYS[i + 1], ARGV[1])
      if s then
        call('ZREM', KEYS[i + 1], ARGV[1])
        call('ZADD', KEYS[i + 1], s, settled)
      end
    elseif d ~= 0 and spec ~= '0' then
      local t, b, f, l = state(got[j])
      if t == false then return b end
      local sb = string.byte(spec)
      if l and sb == 102 then
        local a = string.match(spec, '^.(%d+),') + 0
        local x = c0 - a
        if l == (x - x % w) / w then t = math.max(t + d, 0) end
      elseif l and sb == 107 then
        local a = string.match(spec, '^.(%d+),') + 0
        if check > l then
          if check - l >= (a - t) / limit then t = a else t = t + limit * (check - l) end
          l = check
        end
        t = math.max(math.min(t - d * w, a), -MAXN)
      elseif l then
        local g = spec + 0
        local cur = (r0 - r0 % g) / g
        if cur >= f and cur <= l then
          t = math.max(t + d, 0)
          if cur < l then
            b = math.max(b + d, 0)
            local key = KEYS[i + 1]
            local v = redis.pcall('HINCRBY', key, format('%d', cur), format('%d', d))
            if type(v) == 'number' and v == d and call('PTTL', key) < 0 then
              life = life or makeLife()
              call('PEXPIRE', key, life(w))
            end
          end
        end
      end
      if l then
        set[k + 1], set[k + 2] = ARGV[hs + j - 1], pack(t, b, f, l)
        k = k + 2
      end
    end
  end
  if k > 0 then call('HSET', head, unpack(set, 1, k)) end
  return {1, check}
end

-- Configuration. Limiters that share a key must keep the same rules the
-- same way on the same clock: two margins give two windows, and so two
-- states that each admit a full budget; a limiter without a cost rule
-- another keeps admits calls that rule would refuse. So the head's c
-- holds the configuration of the limiters that made it, and a limiter of
-- another configuration is refused, nothing recorded, with an error
-- naming both. A head made by this call, or left unclaimed ('') by
-- Reset, is claimed: its c is written with the call's first write to
-- the head. A head that counts calls but names no configuration was
-- made by an earlier rlcheck, whose limiters do not check theirs.
local claim
local function foreign(c, counted)
  if c == '' or (not c and not counted) then
    claim = true
    return nil
  end
  return redis.error_reply('CONFIG key ' .. head .. ' is kept by limiters of another configuration (' ..
    (c or 'none recorded: an earlier rlcheck') .. ') than this one (' .. cfg .. '): limiters of one key ' ..
    'must keep the same rules on the same clock; give a new configuration a new key, or stop every ' ..
    'limiter of the old one and Reset the key')
end

-- The head's n counts the calls recorded under the key; the head lives as
-- long as recent admissions need it. A call of exact rules alone counts
-- itself before deciding (a refused call too: n only has to grow); a
-- call with bucketed rules reads n with their fields and writes n + 1
-- with them when it records. A head that is no hash of counts is the
-- hold after a loss, or something written by hand.
local h, live, old, lastMember, held
local exact = false -- whether some rule is exact: then the set tells a retry, not m
local nb = 0 -- the bucketed rules
for i = 1, n do
  if ARGV[rb + 3 * i + 2] == '0' then exact = true else nb = nb + 1 end
end
local wt = hs + nb -- the costs of a limiter with cost rules, if any
if wt > #ARGV then wt = nil end
if nb == 0 then
  local ch = redis.pcall('HMGET', head, 'c', 'h')
  if not ch.err then -- else not a hash: old stays nil
    local c = ch[1]
    held = ch[2]
    if c ~= cfg then
      local err = foreign(c, call('HEXISTS', head, 'n') == 1)
      if err then return err end
    end
    live = redis.pcall('HINCRBY', head, 'n', '1')
    if type(live) == 'number' then
      if not whole(live, 1, MAXN) then return corrupt(head, 'a count n that is not a whole number from 1 to 2^53') end
      old = live - 1
      if claim then call('HSET', head, 'c', cfg) end
      if live == 1 then
        life = makeLife()
        call('PEXPIRE', head, life())
      end
    end
  end
else
  -- The head's fields to read: n, c, h, m unless a rule is exact, then
  -- each bucketed, fixed or bucket rule's state (see "State fields" below).
  if exact then
    h = redis.pcall('HMGET', head, 'n', 'c', 'h', unpack(ARGV, hs, hs + nb - 1))
  else
    h = redis.pcall('HMGET', head, 'n', 'c', 'h', 'm', unpack(ARGV, hs, hs + nb - 1))
  end
  if not h.err then
    old, held = h[1], h[3]
    if h[2] ~= cfg then
      local err = foreign(h[2], old)
      if err then return err end
    end
    if not exact then lastMember = h[4] end
    if old then
      old = tonumber(old)
      if old and not whole(old, 1, MAXN) then return corrupt(head, 'a count n that is not a whole number from 1 to 2^53') end
    else
      old = 0
    end
    live = old
  end
end
if not old then
  local kind = call('TYPE', head)
  kind = kind.ok or kind
  if kind == 'string' and call('GET', head) == 'lost' then -- the hold of an earlier rlcheck
    return redis.error_reply('HELD ' .. head .. ' holds every limiter of the key back for ' ..
      call('PTTL', head) .. ' ms more, after a limiter found the state lost or restored from an older snapshot')
  end
  if kind == 'hash' then
    return redis.error_reply('CORRUPT key ' .. head .. ' holds a count that is not an integer: delete the key')
  end
  return redis.error_reply('WRONGTYPE rlcheck: key ' .. head .. ' holds a ' .. tostring(kind) ..
    ', not the hash of counts of a rate limiter')
end

-- Lost state. The head's absence while the caller counts on it means the
-- state was lost (FLUSHALL, eviction, a restart without the data, a
-- failover to a replica that lacked it); a count below the one the caller
-- saw means it was restored from an older snapshot. Either way the windows
-- may have been emptied of calls still in them. The state is deleted, and
-- the head made anew: its count n starts at an epoch above any count a
-- limiter saw (TIME in µs: every script run takes more than one, so no
-- count since an earlier epoch reaches it), so that no limiter takes the
-- new state for a loss of its own; and its h holds, in the script's
-- clock, the end of the hold (ARGV[v+4]), until which every limiter of
-- the key is refused. By default the hold is the longest window, after
-- which no call recorded before the loss is in any window. Reset makes
-- the head anew at an epoch above this one, without h: that lifts the
-- hold for every limiter, running ones included.
if ARGV[3] ~= '0' and old < tonumber(ARGV[3]) then
  local why = ' counts ' .. old .. ' calls where this limiter saw ' .. ARGV[3]
  if old == 0 then why = ' is gone' end
  for i = 1, #KEYS do call('DEL', KEYS[i]) end
  local t = time or call('TIME')
  local epoch = math.max(t[1] * 1000000 + t[2], tonumber(ARGV[3]) + 1)
  local hold = ARGV[v + 4] + 0
  life = makeLife()
  if hold > 0 then
    call('HSET', head, 'n', format('%d', epoch), 'c', cfg, 'h', format('%d', check + hold))
  else
    call('HSET', head, 'n', format('%d', epoch), 'c', cfg)
  end
  call('PEXPIRE', head, format('%d', math.max(life() + 0, math.ceil(hold / 1000))))
  return redis.error_reply(format('LOST %s%s while this limiter holds recent admissions: the limiter state was ' ..
    'flushed, evicted, lost in a restart or failover, or restored from an older snapshot; every limiter of the ' ..
    'key is held back for %d ms (Reset lifts it) (count %d)', head, why, math.ceil(hold / 1000), epoch))
end
if held then
  local ends = tonumber(held)
  if not whole(ends, -MAXN, MAXN) then return corrupt(head, 'a hold that is not a whole number of microseconds') end
  if check < ends then
    return redis.error_reply(format('HELD %s holds every limiter of the key back for %d ms more, after a limiter ' ..
      'found the state lost or restored from an older snapshot (Reset lifts it)', head, math.ceil((ends - check) / 1000)))
  end
end

-- In flight. A call that takes a lease under a cap waits while the cap's
-- number of leases are live, unless it holds one already (a retry of a
-- call the first run recorded): see "Leases and settlements".
local leaseFor
if mode == 76 then
  local cap, lf, poll = string.match(ARGV[2], '^L.,(%d+),(%d+),(%d+)$')
  cap, leaseFor, poll = cap + 0, lf + 0, poll + 0
  local leases = KEYS[#KEYS]
  if sweepOn then call('ZREMRANGEBYSCORE', leases, '-inf', format('%d', check)) end
  if cap > 0 and call('ZCOUNT', leases, format('(%d', check), '+inf') >= cap and
      not call('ZSCORE', leases, ARGV[1]) then
    local first = call('ZRANGEBYSCORE', leases, format('(%d', check), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
    return {math.max(math.min(first[2] - check, poll), 1), check, n + 1, live}
  end
end

-- Bucketed rules. Bucket b counts the calls recorded in [b*g, (b+1)*g)
-- µs, g the rule's bucket width; the calls in the window (t-W, t] all lie
-- in the buckets floor((t-W)/g) to floor(t/g), so their sum bounds the
-- window's count, and the rule is full when it reaches the limit. The
-- rule's state holds t, the total over the buckets f (the oldest still
-- in the bound) to l (the newest counted), and b, the same total without
-- bucket l; the rule's bucket hash holds the counts of the buckets before
-- l under their bucket numbers. A bucket that leaves the bound is
-- subtracted from the totals and deleted on the next record. So a call
-- reads one field of the head whatever the bucket count, and a call in
-- bucket l writes it back and touches nothing else. A call whose window starts
-- before f (an instant older than one already used) waits until it
-- starts at f: the counts before it are gone.
--
-- sum adds the counts of buckets from to to of a rule whose bucket l
-- (counted in c) is last: all of them, or, given need, only until they
-- reach it, then also returning the bucket where they did. With need it
-- reads 4 buckets first, then 4 times as many each time: the wait of a
-- full rule usually lies in its oldest buckets, and each name read costs.
-- It reads at most 1000 names at once, as unpack takes a bounded number
-- of values. Made only by a run that needs it.
local sum
local function makeSum()
  return function(key, limit, from, to, last, c, need)
    local acc = 0
    local top = math.min(to, last - 1)
    local size = 1000
    if need then size = 4 end
    local lo = from
    while lo <= top do
      local hi = math.min(top, lo + size - 1)
      local f = {}
      for b = lo, hi do f[#f + 1] = string.format('%d', b) end
      local got = redis.pcall('HMGET', key, unpack(f))
      if got.err then
        local kind = redis.call('TYPE', key)
        return nil, redis.error_reply('WRONGTYPE rlcheck: key ' .. key .. ' holds a ' ..
          tostring(kind.ok or kind) .. ', not the hash of bucket counts of a rate rule')
      end
      for j = 1, #got do
        local x = got[j]
        if x then
          x = tonumber(x)
          if not whole(x, 0, limit) then
            return nil, corrupt(key, 'a bucket count that is not a whole number from 0 to the limit')
          end
          acc = acc + x
        end
        if need and acc >= need then return acc, lo + j - 1 end
      end
      lo = hi + 1
      size = math.min(size * 4, 1000)
    end
    if to >= last then acc = acc + c end
    return acc, last
  end
end

-- weighed decides an exact cost rule of limit N and window w for a call
-- of cost c in unit u: it reads the entries in the window (t - w, t] and
-- later ones, sums their costs of the unit (an entry of no costs, from a
-- call-counting limiter of the key, costs 1), and when the sum plus c
-- exceeds N returns the wait until the oldest entries holding the excess
-- leave, else 0. Costs pass N only by a caller's fault: an error then.
-- Made only by a run that needs it.
local weighed
local function makeWeighed()
  return function(key, t, w, limit, c, u)
    local got = redis.pcall('ZRANGEBYSCORE', key, format('(%d', t - w), '+inf', 'WITHSCORES')
    if got.err then
      return 0, redis.error_reply('WRONGTYPE rlcheck: key ' .. key .. ' holds no sorted set of a rate rule')
    end
    if c > limit then
      return 0, redis.error_reply(format('COST a call of %d exceeds the limit %d on its own', c, limit))
    end
    if #got > 0 and got[#got] - t > ahead then return 0, far(key, 'an entry', got[#got] + 0, t) end
    local pat = '|' .. string.rep('%d+,', u - 1) .. '(%d+)[^|]*$'
    local costs, sum = {}, 0
    for j = 1, #got, 2 do
      local x = tonumber(string.match(got[j], pat)) or 1
      costs[j], sum = x, sum + x
    end
    local need = sum + c - limit
    if need <= 0 then return 0 end
    local acc = 0
    for j = 1, #got, 2 do
      acc = acc + costs[j]
      if acc >= need then return got[j + 1] + w - t end
    end
    return 0
  end
end

local o = 5 -- where the current bucketed rule's state is in h
if exact then o = 4 end
local fo = hs - o -- ARGV[fo + o] names the field h[o] holds
-- Fixed and bucket rules, decided at the check time. A fixed rule of
-- window w and offset a keeps in its state l, the index of the window
-- [l*w + a, (l+1)*w + a) counted, and t, the costs admitted in it; a call
-- waits for the next window when they leave no room for its cost or when
-- it comes in the window's last margin. Its windows start on whole
-- microseconds, so a caller's instant and its floor (the check) lie in
-- the same one. A bucket rule of N per w keeps t, its level times w, and
-- l, the instant of that level: the level grows by N per microsecond up
-- to the capacity times w less the margin's refill, and a call of cost c
-- needs c*w of it. A caller's instant is taken down for the check and up
-- for the level left, so that every rounding refuses: the refill a call
-- sees never exceeds the time that passed. Every number stays an
-- integer below 2^53 (New refuses rules that would pass it), where a
-- double quotient rounds to an integer only when it is one. It returns
-- the wait, or 0 and the new state's t and l; or nil and an error reply.
local function kindRule(o, spec, sb, limit, w, cost, costly)
  local a, b = string.match(spec, '^.(%d+),(%d+)$')
  a, b = a + 0, b + 0
  local t, b0, f0, l = state(h[o])
  if t == false then return nil, b0 end -- b0 holds the error reply
  if l then
    -- A fixed rule's count is within its limit, a bucket's level within
    -- its capacity, and the instant of either not far ahead.
    local ok
    if sb == 102 then
      ok = whole(t, 0, (costly and MAXN) or limit) and whole(l, -MAXN / w, MAXN / w) and l * w + a - check <= ahead
    else
      ok = whole(t, (costly and -MAXN) or 0, a) and whole(l, -MAXN, MAXN) and l - check <= ahead
    end
    if not (ok and b0 == 0 and f0 == 0) then
      return nil, corrupt(head, 'a ' .. ((sb == 102 and 'fixed') or 'bucket') .. ' rule state out of its bounds (' .. ARGV[fo + o] .. ')')
    end
  end
  if sb == 102 then
    local x = check - a
    local idx = (x - x % w) / w
    if l and l > idx then -- an instant before the window counted: wait for it
      return l * w + a - check
    end
    local sum = 0
    if l == idx then sum = t end
    local stop = idx * w + a + w
    if (cost > 0 and check >= stop - b) or sum + cost > limit then
      return stop - check
    end
    return 0, sum + cost, idx
  end
  local lvl = a
  if l then
    lvl = t
    if check > l and check - l >= (a - lvl) / limit then
      lvl = a
    elseif check > l then
      lvl = lvl + limit * (check - l)
    end
  end
  local need = cost * w
  if lvl < need then
    local rw = math.ceil((need - lvl) / limit)
    if l and l > check then rw = rw + l - check end
    return rw
  end
  -- The level was taken at the check instant, a caller's instant rounded
  -- down; the new level is dated at the record instant, rounded up, so
  -- that the refill a later call counts from it never exceeds the time
  -- that truly passed (a call 999 ns into a microsecond and one a second
  -- after it are 1 µs less than a second apart).
  if not l or at > l then l = at end
  return 0, lvl - need, l
end

-- What the record writes to the head, as HSET arguments (set[1..k]), and,
-- per bucketed rule that leaves bucket l, {its bucket hash, the bucket to
-- write or nil, its count, buckets to drop from, to, its window, whether
-- it held no count} in moves. The constructor sizes the array once.
local set = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
local k = 0
local moves

-- An exact rule is full when its limit-th latest entry is still in the
-- window (check - score < window, half-open); the call may go when that
-- entry leaves. Reading that one entry decides the rule without trimming
-- first, so a refused call records nothing.
local wait, binding = 0, 0
local zset, exactW = 0, 0 -- the first exact rule, the longest exact window
-- short: a limit known to exceed the sorted set's size (a rank read came
-- back empty), so that no exact rule of a limit as large reads the set.
local short
for i = 1, n do
  local p = rb + 3 * i
  local key, w = KEYS[i + 1], ARGV[p + 1] + 0
  local cost, unit = 1, nil
  if wt then
    cost, unit = ARGV[wt + 2 * i - 2] + 0, ARGV[wt + 2 * i - 1]
    if unit == '0' then unit = nil end
  end
  local spec = ARGV[p + 2]
  local sb = string.byte(spec)
  if sb == 102 or sb == 107 then
    local rw, tv, lv = kindRule(o, spec, sb, ARGV[p] + 0, w, cost, unit)
    if not rw then return tv end
    if rw > wait then
      wait, binding = rw, i
    elseif rw == 0 and wait == 0 then
      set[k + 1], set[k + 2] = ARGV[fo + o], pack(tv, 0, 0, lv)
      k = k + 2
    end
    o = o + 1
  elseif spec ~= '0' then
    local g = spec + 0
    -- Lua's a % b is a - floor(a / b) * b: exact here, since |a| + b
    -- stays below 2^53 (epoch microseconds and windows up to a century),
    -- where a / b cannot round up to the next integer; and in [0, b)
    -- for negative a too (virtual time near zero).
    local x = check - w
    local lo = (x - x % g) / g
    local cur = (at - at % g) / g
    if cur < lo then cur = lo end
    local total, before, first0, last = state(h[o])
    if total == false then return before end
    local limit = ARGV[p] + 0
    local hi = limit -- a settlement above the estimate may take a cost rule past it
    if unit then hi = MAXN end
    -- 0 <= b <= t <= the limit; f <= l, at most the buckets a window
    -- spans apart (two more for a record a microsecond after its check);
    -- l's instant within 2^53 µs, and not far ahead.
    if total and not (whole(total, 0, hi) and whole(before, 0, total) and whole(last, -MAXN / g, MAXN / g) and
        whole(first0, last - math.ceil(w / g) - 2, last)) then
      return corrupt(head, 'a bucketed rule state out of its bounds (' .. ARGV[fo + o] .. ')')
    end
    if not total then total, before, last = 0, 0, lo - 1 end
    local first = first0 or lo
    local c = total - before
    if last * g - check > ahead then return far(head, 'a bucket', last * g, check) end
    if lo < first then
      local rw = first * g + w - check
      if rw > wait then wait, binding = rw, i end
    else
      local dropTo
      if first < lo then
        dropTo = math.min(lo - 1, last)
        sum = sum or makeSum()
        local gone, err = sum(key, hi, first, dropTo, last, c)
        if not gone then return err end
        if dropTo >= last then
          total, before, c = 0, 0, 0
        elseif gone > before then
          return corrupt(key, 'bucket counts above the total the head holds for them')
        else
          total, before = total - gone, before - gone
        end
        first = lo
      end
      local count = 0
      if cur == last then
        count = c
      elseif cur < last then -- an instant older than one already counted
        local got = redis.pcall('HGET', key, format('%d', cur))
        if type(got) == 'table' and got.err then
          return redis.error_reply('WRONGTYPE rlcheck: key ' .. key .. ' holds no hash of bucket counts of a rate rule')
        end
        if got then
          count = tonumber(got)
          if not whole(count, 0, hi) then
            return corrupt(key, 'a bucket count that is not a whole number from 0 to the limit')
          end
        end
      end
      if total + cost > limit then
        -- The wait ends when the oldest buckets holding total + cost -
        -- limit leave; when the older ones hold less, that is bucket l,
        -- with nothing to read.
        local need, b = total + cost - limit, last
        if before >= need then
          sum = sum or makeSum()
          local got
          got, b = sum(key, hi, first, last, last, c, need)
          if not got then return b end
        end
        local rw = (b + 1) * g + w - check
        if rw > wait then wait, binding = rw, i end
      elseif wait == 0 then
        -- The rule's new state: the total, the total before l, the
        -- bound's ends.
        local b, l = before, last
        if cur > last then -- l moves to the call's bucket
          b, l = total, cur
        elseif cur < last then
          b = before + cost
        end
        set[k + 1], set[k + 2] = ARGV[fo + o], pack(total + cost, b, first, l)
        k = k + 2
        if cur ~= last or dropTo then
          -- A call after l moves c to l's own field of the bucket hash;
          -- one before l adds to its bucket there.
          local to, cnt
          if cur > last and last >= first and c > 0 then
            to, cnt = last, c
          elseif cur < last then
            to, cnt = cur, count + cost
          end
          moves = moves or {}
          moves[#moves + 1] = {key, to, cnt, first0, dropTo and math.min(dropTo, last - 1), w, before == 0}
        end
      end
    end
    o = o + 1
  else
    if zset == 0 then zset = i end
    if w > exactW then exactW = w end
    local rank = ARGV[p]
    local entry
    if unit then
      -- A call of cost 0 is read too: a settlement may have overfilled the window.
      weighed = weighed or makeWeighed()
      local rw, err = weighed(key, check, w, -rank, cost, unit)
      if err then return err end
      if rw > wait then wait, binding = rw, i end
    elseif not short or short > -rank then
      entry = redis.pcall('ZRANGE', key, rank, rank, 'WITHSCORES')
      if entry.err then
        local kind = call('TYPE', key)
        return redis.error_reply('WRONGTYPE rlcheck: key ' .. key .. ' holds a ' ..
          tostring(kind.ok or kind) .. ', not the sorted set of a rate rule')
      end
      if not entry[2] then short = -rank end
    end
    if entry and entry[2] then
      local score = entry[2] + 0
      if score - check > ahead then return far(key, 'an entry', score, check) end
      local rw = score + w - check
      if rw > wait then wait, binding = rw, i end
    end
  end
end

-- A sweep removes only entries older than the longest exact window plus
-- keep. A caller's clock (Client, Virtual) can bring an instant older than
-- one already used, and such a call must still see every entry that
-- shares a window with it; entries newer than the call only make its
-- decision stricter. So there keep is the window again, and at least
-- 1 s: calls up to that much older than the newest sweeping call are
-- judged in full. Under server time every call is judged at TIME, which
-- only a clock step sets back: 1 s covers it, and a day's set keeps one
-- day, not two. Entries past keeping do not change any decision; they are
-- swept on the caller's cue (one call in 16 of each limiter), which also
-- looks for entries from the far future.
local sweep
if zset > 0 then
  if sweepOn then
    local keep = 1000000
    if not serverTime then keep = math.max(exactW, 1000000) end
    sweep = check - exactW - keep
    local key = KEYS[zset + 1]
    local last = call('ZRANGE', key, -1, -1, 'WITHSCORES')
    if last[2] and last[2] - check > ahead then return far(key, 'an entry', last[2] + 0, check) end
  end
end

-- An earlier attempt of this very call (a retry after a lost reply) may
-- have recorded it already: then report that record, in s. The member's
-- entry is the call's own when the prefix is random, when its score is
-- the caller-supplied record time, or, for server time, when it is
-- recent enough to be a retry's. The head remembers only the last member,
-- so under bucketed rules alone a retry that comes after another call of
-- the key counts again: capacity spent without a send, never the reverse.
--
-- The sorted set is written first: a retry finds its record there before
-- counting anything twice. The record goes in before the sweep, so a
-- sweep never empties the set: Redis would delete the key, and ZADD would
-- make it again without expiry.
if not record and (zset > 0 or not exact) then
  record = time[1] .. string.sub('00000', #time[2]) .. time[2]
end
local s, where
if zset > 0 then
  where = KEYS[zset + 1]
  if wait > 0 then
    s = call('ZSCORE', where, ARGV[1])
  elseif call('ZADD', where, 'NX', record, ARGV[1]) == 0 then
    s = call('ZSCORE', where, ARGV[1])
  elseif sweep then
    call('ZREMRANGEBYSCORE', where, '-inf', format('%d', sweep))
  end
elseif lastMember == ARGV[1] then
  where = head
  s = call('HGET', head, 'a')
end
if s then
  s = tonumber(s)
  if not whole(s, -MAXN, MAXN) then return corrupt(where, 'a record time that is not a whole number of microseconds') end
  local retry = tonumber(ARGV[v + 1])
  if not retry or (not serverTime and s == at) or
      (serverTime and s <= check and check - s <= retry) then
    return {s, live}
  end
  return redis.error_reply('CLASH member ' .. ARGV[1] .. ' is already in ' .. where ..
    ' from another call: limiters sharing a key need distinct member prefixes')
end
if wait > 0 then
  return {wait, check, binding, live}
end

-- A bucket hash gets its expiry when a bucket is written to it while it
-- held no count, and so may have been gone.
if moves then
  life = life or makeLife()
  for j = 1, #moves do
    local mv = moves[j]
    local key, from, to = mv[1], mv[4], mv[5]
    if to and from <= to then
      for b0 = from, to, 1000 do
        local f = {}
        for b = b0, math.min(to, b0 + 999) do f[#f + 1] = format('%d', b) end
        call('HDEL', key, unpack(f))
      end
    end
    if mv[2] then
      local r = redis.pcall('HSET', key, format('%d', mv[2]), format('%d', mv[3]))
      if type(r) == 'table' and r.err then
        local kind = call('TYPE', key)
        return redis.error_reply('WRONGTYPE rlcheck: key ' .. key .. ' holds a ' ..
          tostring(kind.ok or kind) .. ', not the hash of bucket counts of a rate rule')
      end
      if mv[7] then call('PEXPIRE', key, life(mv[6])) end
    end
  end
end
if h then
  live = old + 1
  set[k + 1], set[k + 2] = 'n', format('%d', live)
  k = k + 2
  if claim then
    set[k + 1], set[k + 2] = 'c', cfg
    k = k + 2
  end
  if zset == 0 then
    set[k + 1], set[k + 2], set[k + 3], set[k + 4] = 'm', ARGV[1], 'a', record
    k = k + 4
  end
  call('HSET', head, unpack(set, 1, k))
end

-- Expiry. Every key outlives a record made now by at least its window
-- plus a lease: the caller asks for a refresh at most a lease after its
-- last one, which sets each key to expire its window plus two leases from
-- now (the head never sooner than it already would: limiters with longer
-- windows may share it). A head made by this call gets its expiry too.
if ARGV[4] == '1' or old == 0 then
  life = life or makeLife()
  local ttl = life()
  if call('PTTL', head) < tonumber(ttl) then
    call('PEXPIRE', head, ttl)
  end
  if ARGV[4] == '1' then
    if zset > 0 then call('PEXPIRE', KEYS[zset + 1], life(exactW)) end
    for i = 1, n do
      local p = rb + 3 * i
      if ARGV[p + 2] ~= '0' then call('PEXPIRE', KEYS[i + 1], life(tonumber(ARGV[p + 1]))) end
    end
  end
end
-- The lease set outlives its longest lease by two leases of expiry; like
-- the other keys, its expiry is refreshed on the caller's cue (a set made
-- anew between two cues waits for the next one).
if leaseFor then
  local leases = KEYS[#KEYS]
  call('ZADD', leases, format('%d', check + leaseFor), ARGV[1])
  if ARGV[4] == '1' then
    call('PEXPIRE', leases, format('%d', math.ceil(leaseFor / 1000) + 2 * ARGV[v - 1]))
  end
end
return {at, live}
