-- rlcheck: 3 rules, half-open windows, times in ms, integer arithmetic.
-- rule 0: 10/1s: send i breaks it when t_i - t_{i-10} <= 999.
-- rule 1: 500/1m: send i breaks it when t_i - t_{i-500} <= 59999.
-- rule 2: 10000/24h: send i breaks it when t_i - t_{i-10000} <= 86399999.
WITH src AS (
  SELECT COALESCE(CAST(tenant AS VARCHAR), '') AS k, CAST(ts_ms AS BIGINT) AS t, CAST(line AS BIGINT) AS tb
  FROM sends
),
s AS MATERIALIZED (
  SELECT k, t, tb AS ref,
    row_number() OVER (PARTITION BY k ORDER BY t, tb) - 1 AS i,
    count(*) OVER (PARTITION BY k ORDER BY t) AS cum,
    CASE WHEN t - lag(t, 10) OVER (PARTITION BY k ORDER BY t, tb) <= 999 THEN 1 END AS v0,
    CASE WHEN t - lag(t, 500) OVER (PARTITION BY k ORDER BY t, tb) <= 59999 THEN 1 END AS v1,
    CASE WHEN t - lag(t, 10000) OVER (PARTITION BY k ORDER BY t, tb) <= 86399999 THEN 1 END AS v2
  FROM src
),
p0 AS MATERIALIZED (
  SELECT k, i, cum - lo AS c, lo, v0 FROM (
    SELECT k, i, cum, v0, d,
      count(d) OVER (PARTITION BY k ORDER BY pt, d NULLS FIRST ROWS UNBOUNDED PRECEDING) AS lo
    FROM (
      SELECT k, t - 999 AS pt, CAST(NULL AS INTEGER) AS d, i, cum, v0 FROM s
      UNION ALL
      SELECT k, t, 1, NULL, NULL, NULL FROM src
    ) u
  ) q WHERE d IS NULL
),
p1 AS MATERIALIZED (
  SELECT k, i, cum - lo AS c, lo, v1 FROM (
    SELECT k, i, cum, v1, d,
      count(d) OVER (PARTITION BY k ORDER BY pt, d NULLS FIRST ROWS UNBOUNDED PRECEDING) AS lo
    FROM (
      SELECT k, t - 59999 AS pt, CAST(NULL AS INTEGER) AS d, i, cum, v1 FROM s
      UNION ALL
      SELECT k, t, 1, NULL, NULL, NULL FROM src
    ) u
  ) q WHERE d IS NULL
),
p2 AS MATERIALIZED (
  SELECT k, i, cum - lo AS c, lo, v2 FROM (
    SELECT k, i, cum, v2, d,
      count(d) OVER (PARTITION BY k ORDER BY pt, d NULLS FIRST ROWS UNBOUNDED PRECEDING) AS lo
    FROM (
      SELECT k, t - 86399999 AS pt, CAST(NULL AS INTEGER) AS d, i, cum, v2 FROM s
      UNION ALL
      SELECT k, t, 1, NULL, NULL, NULL FROM src
    ) u
  ) q WHERE d IS NULL
),
a0 AS (
  SELECT k, max(c) AS mx,
    count(v0) AS n0, min(CASE WHEN v0 = 1 THEN i END) AS fi0, min(CASE WHEN v0 = 1 THEN lo END) AS fs0
  FROM p0 GROUP BY k
),
m0 AS (
  SELECT p0.k, min(p0.lo) AS ms FROM p0 JOIN a0 ON p0.k = a0.k AND p0.c = a0.mx GROUP BY p0.k
),
a1 AS (
  SELECT k, max(c) AS mx,
    count(v1) AS n1, min(CASE WHEN v1 = 1 THEN i END) AS fi1, min(CASE WHEN v1 = 1 THEN lo END) AS fs1
  FROM p1 GROUP BY k
),
m1 AS (
  SELECT p1.k, min(p1.lo) AS ms FROM p1 JOIN a1 ON p1.k = a1.k AND p1.c = a1.mx GROUP BY p1.k
),
a2 AS (
  SELECT k, max(c) AS mx,
    count(v2) AS n2, min(CASE WHEN v2 = 1 THEN i END) AS fi2, min(CASE WHEN v2 = 1 THEN lo END) AS fs2
  FROM p2 GROUP BY k
),
m2 AS (
  SELECT p2.k, min(p2.lo) AS ms FROM p2 JOIN a2 ON p2.k = a2.k AND p2.c = a2.mx GROUP BY p2.k
),
a AS (
  SELECT k, count(*) AS sends, min(t) AS first_t, max(t) AS last_t FROM src GROUP BY k
),
want AS (
  SELECT k, fi0 AS i FROM a0
  UNION
  SELECT k, fs0 FROM a0
  UNION
  SELECT k, fi1 AS i FROM a1
  UNION
  SELECT k, fs1 FROM a1
  UNION
  SELECT k, fi2 AS i FROM a2
  UNION
  SELECT k, fs2 FROM a2
  UNION
  SELECT k, ms FROM m0
  UNION
  SELECT k, ms FROM m1
  UNION
  SELECT k, ms FROM m2
),
d AS (
  SELECT s.k, s.i, s.t, s.ref FROM s JOIN want ON s.k = want.k AND s.i = want.i
)
SELECT a.k AS key, 0 AS rule_index, '10/1s' AS rule, a.sends AS sends, a.first_t AS first_t, a.last_t AS last_t, r.n0 AS violations, r.fi0 AS first_index, f.t AS first_t_violation, f.ref AS first_ref, r.fs0 AS first_window_index, fs.t AS first_window_t, fs.ref AS first_window_ref, r.mx AS max_in_window, ms.t AS max_window_t, ms.ref AS max_window_ref
FROM a
  JOIN a0 r ON r.k = a.k
  JOIN m0 m ON m.k = a.k
  LEFT JOIN d f ON f.k = a.k AND f.i = r.fi0
  LEFT JOIN d fs ON fs.k = a.k AND fs.i = r.fs0
  LEFT JOIN d ms ON ms.k = a.k AND ms.i = m.ms
UNION ALL
SELECT a.k, 1, '500/1m', a.sends, a.first_t, a.last_t, r.n1, r.fi1, f.t, f.ref, r.fs1, fs.t, fs.ref, r.mx, ms.t, ms.ref
FROM a
  JOIN a1 r ON r.k = a.k
  JOIN m1 m ON m.k = a.k
  LEFT JOIN d f ON f.k = a.k AND f.i = r.fi1
  LEFT JOIN d fs ON fs.k = a.k AND fs.i = r.fs1
  LEFT JOIN d ms ON ms.k = a.k AND ms.i = m.ms
UNION ALL
SELECT a.k, 2, '10000/24h', a.sends, a.first_t, a.last_t, r.n2, r.fi2, f.t, f.ref, r.fs2, fs.t, fs.ref, r.mx, ms.t, ms.ref
FROM a
  JOIN a2 r ON r.k = a.k
  JOIN m2 m ON m.k = a.k
  LEFT JOIN d f ON f.k = a.k AND f.i = r.fi2
  LEFT JOIN d fs ON fs.k = a.k AND fs.i = r.fs2
  LEFT JOIN d ms ON ms.k = a.k AND ms.i = m.ms
ORDER BY 1, 2;
