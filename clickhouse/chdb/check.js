// make chdb-check: every DDL file of clickhouse/ and every results statement
// warehouse's TestResultsSQLRunsOnClickHouse dumped (LIFT_DUMP_SQL), run on
// current ClickHouse through chDB (one session: chDB allows one per
// process). Two databases: `lift`, a fresh install rendered
// for a current server, and `lift_up`, 18.16-shaped and upgraded in place (the
// version-gated statements run last, over the existing views). The
// placeholders are rendered as warehouse.Migrate renders them.
const fs = require('fs');
const path = require('path');
const {Session} = require('chdb');
const [ddlDir, dumpDir] = process.argv.slice(2);
const files = fs.readdirSync(ddlDir).filter(f => f.endsWith('.sql')).sort();

function render(sql, modern, db) {
  const since = /\{since:[\d.]+\}/.test(sql);
  if (since && !modern) return null; // Migrate skips it and runs it after an upgrade
  return sql.replace(/\{since:[\d.]+\}/g, '')
    .replace(/\{lowcard:(\w+)\}/g, modern ? 'LowCardinality($1)' : '$1')
    .replace(/\{codec:([^{}]+)\}/g, (m, c) => modern ? `CODEC(${c.trim()})` : '')
    .replace(/\{engine:(\w+)\(([^)]*)\)\}/g, '$1($2)')
    .replace(/\{db\}/g, db).replace(/\{on_cluster\}/g, '');
}

let failures = 0;
function run(s, what, sql) {
  try { s.query(sql, 'TSV'); } catch (e) { failures++; console.log(`FAIL ${what}: ${String(e.message).split('\n')[0]}`); }
}
function migrate(s, db, modern, only) {
  for (const f of files) {
    if (only && !only(f)) continue;
    const sql = render(fs.readFileSync(path.join(ddlDir, f), 'utf8'), modern, db);
    if (sql !== null) run(s, f, sql);
  }
}

const s = new Session();
console.log(s.query('SELECT version()', 'TSV').trim(), '(chDB)');
run(s, 'create database', 'CREATE DATABASE IF NOT EXISTS lift');
migrate(s, 'lift', true);
const dumped = dumpDir ? fs.readdirSync(dumpDir).filter(f => f.endsWith('.sql')).sort() : [];
for (const f of dumped) run(s, f, fs.readFileSync(path.join(dumpDir, f), 'utf8'));

run(s, 'create database', 'CREATE DATABASE IF NOT EXISTS lift_up');
migrate(s, 'lift_up', false);
migrate(s, 'lift_up', true, f => /\{since:/.test(fs.readFileSync(path.join(ddlDir, f), 'utf8')));
run(s, 'insert after upgrade', `INSERT INTO lift_up.events (shop_id, experiment_id, event_id, received_at, created_at, session_id,
  visitor_id, event_type, source, page_path, page_type, product_ids, variant_ids, quantity, checkout_token, order_id, custom_name,
  revenue, test_group, is_bot, payload) VALUES (1, '7', 'e1', now(), now(), 's', 'v', 'product_added_to_cart', 'script', '/',
  'product', ['8101'], ['9101'], 1, '', '', '', 0, 1, 0, '')`);
const fed = s.query('SELECT sum(added_to_cart) FROM lift_up.agg_event_activity', 'TSV').trim();
if (fed !== '1') { failures++; console.log(`FAIL the upgraded views: agg_event_activity holds ${fed} add-to-carts, want 1`); }

// The visitor rollup (0520-0528) on both databases: its views take
// LowCardinality columns on a current server, and what they write must be
// what the rollup statements read.
for (const db of ['lift', 'lift_up']) {
  run(s, `feed ${db}.agg_visitors`, `INSERT INTO ${db}.assignments (shop_id, experiment_id, visitor_id, version, assignment_id,
    session_id, test_group, reason, country, device, visitor_type, utm_source, utm_medium, utm_campaign, gclid, fbclid,
    assigned_at, received_at, is_bot) VALUES (1, '7', 'v', 5, 'a', 's', 1, 'random_split', 'US', 'mobile', 'new', 'google',
    'cpc', '', '', '', now(), now(), 0)`);
  run(s, `feed ${db}.agg_visitors`, `INSERT INTO ${db}.sessions (shop_id, experiment_id, session_id, record_id, visitor_id,
    seen_at, page_path, referrer, device, country, visitor_type, utm_source, utm_medium, utm_campaign, is_bot)
    VALUES (1, '7', 's', 'r1', 'v', now(), '/', '', 'mobile', 'US', 'new', '', '', '', 0),
    (1, '7', 's', 'r2', 'v', now() + 30, '/p', '', 'mobile', 'US', 'new', '', '', '', 0)`);
  run(s, `feed ${db}.agg_visitors`, `INSERT INTO ${db}.page_views (shop_id, experiment_id, product_id, view_id, session_id,
    visitor_id, viewed_at, is_bot) VALUES (1, '7', '8101', 'pv', 's', 'v', now(), 0)`);
  let got = '';
  try {
    got = s.query(`SELECT toInt32(argMaxMerge(assignment) % 65536) - 1, argMaxMerge(device), uniqExactMerge(pages),
      maxMerge(added_to_cart), maxMerge(clicked) FROM ${db}.agg_visitors WHERE experiment_id = '7'`, 'TSV').trim();
  } catch (e) { got = String(e.message).split('\n')[0]; }
  const want = db === 'lift_up' ? '1\tmobile\t2\t1\t1' : '1\tmobile\t2\t0\t1';
  if (got !== want) { failures++; console.log(`FAIL ${db}.agg_visitors holds ${JSON.stringify(got)}, want ${JSON.stringify(want)}`); }
}

console.log(`${files.length} DDL files (fresh and upgraded), ${dumped.length} dumped statements: ${failures} failures`);
process.exitCode = failures ? 1 : 0;
