#!/usr/bin/env bash
# page.sh BUILD_DIR - the coordinator's status pages in a real browser.
#
# A dratopo-coordinator (plaintext: the pages are what is tested here; the
# mTLS path is coordinator_e2e's) is fed by agents on the sysfs fixtures;
# headless Chromium, driven over WebDriver (chromedriver, curl, jq), looks
# at what it serves:
#   - the fleet page lists every node with its verdict; the filter form
#     works without script; paging walks the whole table;
#   - the drifted p5.48xlarge's page draws its missing GPU and EFAs on the
#     picture, each inside its PCIe root, visible (checked in the DOM, and
#     in a screenshot kept as an artifact: the missing devices' colour is
#     in the picture, and absent from the healthy node's);
#   - a hostile agent (DMI product name, PCIe root name, model strings,
#     agent version all carrying <script>, quotes and handlers) gets no
#     markup into any page: every string renders as text, nothing runs,
#     and the standalone SVG still parses;
#   - no page loads anything from elsewhere or runs a script; the p5 node
#     page stays under 200 KB; /nodes.json and /types.json are byte for
#     byte what `dratopo nodes|types -o json` print.
# Screenshots go to BUILD_DIR/page-artifacts/; with DRATOPO_SCREENSHOTS=write
# the README's (fleet, a node's topology) are written to docs/img/ too.
DRIVES="$1/bin/dratopo-coordinator"
NAME=page; . "$(dirname "$0")/lib.sh"
COORD="$1/bin/dratopo-coordinator"
CLIENT="$1/tests/coord_client"
FX="$1/fixtures/agent"
ART="$1/page-artifacts"
COORD_PID="" CD_PID="" SID=""
export GRPC_VERBOSITY=NONE
cleanup() {
	[ -n "$SID" ] && curl -s --noproxy '*' -X DELETE "http://127.0.0.1:$CD/session/$SID" >/dev/null
	[ -n "$CD_PID" ] && kill "$CD_PID" 2>/dev/null
	[ -n "$COORD_PID" ] && kill -9 "$COORD_PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

for tool in chromium chromedriver curl jq; do
	command -v "$tool" >/dev/null || { echo "FAIL: $tool is not installed (tools/dev deps)" >&2; exit 1; }
done
[ -d "$FX/p5.48xlarge/sys" ] || bash "$ROOT/tests/fixtures/agent/mksysfs.sh" "$FX" >/dev/null
rm -rf "$ART" && mkdir -p "$ART"

# ---- a hostile node: markup in its DMI product name (the fixture) and in
# a PCIe root's name, its models and its agent version (coord_client sends
# what no agent would: an agent finds no host bridge in such a path) ----
# (an instance type is 1 to 64 printable characters without blanks: the
# coordinator refuses others)
EVIL_TYPE="p5\"'><script>document.body.dataset.pwned=1</script>"
EVIL_ROOT="pci\"'><svg/onload=go()>&amp;"   # a root name is at most 31 bytes
cp -a "$FX/p5.48xlarge" "$TMP/hostile"
printf '%s\n' "$EVIL_TYPE" >"$TMP/hostile/sys/devices/virtual/dmi/id/product_name"
# and an hwdb extra whose GPU's product name is markup (its PCI id is in no
# table, so that name is what the pictures show)
"$BIN" hwdb export p5.48xlarge | sed -e 's/^  name: p5.48xlarge/  name: x9.48xlarge/' \
	-e 's/^  family: p5/  family: x9/' -e 's/^    pciId: 10de:2330/    pciId: 10de:fff0/' \
	-e "s|^      productName: .*|      productName: \"<script>document.body.dataset.pwned='extra'</script>\\\\\"'\"|" \
	>"$TMP/x9.yaml"
grep -q "pwned='extra'" "$TMP/x9.yaml" || fail "the hostile extra was not written"

# ---- the coordinator and its fleet ----
# (--stale-after 1h: no node goes stale while the browser looks, slowly
# under the sanitizers, so that two reads of the fleet agree)
"$COORD" --listen 127.0.0.1:0 --http 127.0.0.1:0 --insecure --db "$TMP/fleet.db" \
	--hwdb-extra "$TMP/x9.yaml" --stale-after 1h 2>"$TMP/coord.log" &
COORD_PID=$!
for _ in $(seq 100); do
	grep -q 'event=start ' "$TMP/coord.log" && break
	sleep 0.1
done
PORT=$(grep -o 'grpc_port=[0-9]*' "$TMP/coord.log" | head -1 | cut -d= -f2)
HTTP=$(grep -o 'http_port=[0-9]*' "$TMP/coord.log" | head -1 | cut -d= -f2)
[ -n "$HTTP" ] || { fail "coordinator did not start: $(cat "$TMP/coord.log")"; e2e_finish; }
BASE="http://127.0.0.1:$HTTP"
report() {   # report NODE FIXTURE [ARGS...]
	local node=$1 fx=$2; shift 2
	expect 0 "$AGENT" run --once --insecure --coordinator "127.0.0.1:$PORT" --node-name "$node" \
		--sysfs-root "$FX/$fx" "$@"
}
report gpu-a p5.48xlarge
report gpu-b p5.48xlarge-degraded
report gpu-c g5.48xlarge
report gpu-d p4d.24xlarge
report new-1 unknown
report new-2 unknown
report new-3 p5en.48xlarge --instance-type p7.48xlarge
declare -A WANT=([gpu-a]=match [gpu-b]=drift [gpu-c]=match [gpu-d]=match [new-1]=learned
		 [new-2]=learned [new-3]=drift)

# ---- WebDriver ----
chromedriver --port=0 >"$TMP/chromedriver.log" 2>&1 &
CD_PID=$!
for _ in $(seq 100); do
	CD=$(sed -n 's/.*started successfully on port \([0-9]*\).*/\1/p' "$TMP/chromedriver.log")
	[ -n "$CD" ] && break
	sleep 0.1
done
[ -n "$CD" ] || { fail "chromedriver did not start: $(cat "$TMP/chromedriver.log")"; e2e_finish; }
# wd METHOD PATH [BODY]: one WebDriver call; the answer in $TMP/wd.json
wd() {
	curl -s --noproxy '*' --max-time 60 -X "$1" -H 'Content-Type: application/json' \
		${3:+--data-binary "$3"} "http://127.0.0.1:$CD$2" >"$TMP/wd.json"
}
mkdir -p "$TMP/profile"
wd POST /session "$(jq -nc --arg dir "$TMP/profile" '{capabilities: {alwaysMatch: {
	browserName: "chrome", "goog:chromeOptions": {args: ["--headless", "--no-sandbox",
	"--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
	"--disable-component-update", "--disable-sync", "--hide-scrollbars",
	"--force-device-scale-factor=1", "--user-data-dir=" + $dir, "--window-size=1400,1000"]}}}}')"
SID=$(jq -r '.value.sessionId // empty' "$TMP/wd.json")
[ -n "$SID" ] || { fail "no browser session: $(head -c 600 "$TMP/wd.json")"; e2e_finish; }
S="/session/$SID"
go() { wd POST "$S/url" "$(jq -nc --arg u "$1" '{url: $u}')"; }
# js SCRIPT [ARGS-JSON]: the script's value, compact JSON, on stdout
js() {
	wd POST "$S/execute/sync" "$(jq -nc --arg s "$1" --argjson a "${2:-[]}" '{script: $s, args: $a}')"
	jq -c '.value' "$TMP/wd.json"
}
size() { wd POST "$S/window/rect" "{\"width\": $1, \"height\": $2}"; }
shot() { wd GET "$S/screenshot"; jq -r .value "$TMP/wd.json" | base64 -d >"$1"; }
# full WIDTH PNG: the whole page at that width
full() {
	local h
	size "$1" 900
	# the window's height less its viewport's is the browser's own (about
	# 140 px, even headless)
	h=$(js 'return Math.ceil(document.documentElement.scrollHeight) + window.outerHeight - window.innerHeight')
	size "$1" "$((h < 4000 ? h : 4000))"
	js 'window.scrollTo(0, 0); return 1' >/dev/null
	shot "$2"
}
# What every page must be: no script, nothing loaded from elsewhere,
# nothing a hostile string could have made.
INERT='return {scripts: document.scripts.length,
  resources: performance.getEntriesByType("resource").length,
  handlers: document.querySelectorAll("[onerror],[onload],[onclick]").length,
  imgs: document.querySelectorAll("img, iframe, object, embed").length,
  pwned: document.body.dataset.pwned || null,
  foreign: Array.from(document.querySelectorAll("[href],[src],[action]")).map(e =>
    e.getAttribute("href") || e.getAttribute("src") || e.getAttribute("action"))
    .filter(u => !u.startsWith("/") && !u.startsWith("?") && !u.startsWith("#")).length}'
inert() {   # inert WHAT
	local got
	got=$(js "$INERT" | jq -cS .)
	[ "$got" = '{"foreign":0,"handlers":0,"imgs":0,"pwned":null,"resources":0,"scripts":0}' ] ||
		fail "$1: not inert: $got"
}

# ---- the fleet page ----
go "$BASE/"
rows=$(js 'return Array.from(document.querySelectorAll("table.nodes tr[data-node]")).map(r =>
  [r.dataset.node, r.dataset.verdict, r.querySelector(".v").textContent])')
for node in "${!WANT[@]}"; do
	got=$(jq -c --arg n "$node" '[.[] | select(.[0] == $n) | .[1:]]' <<<"$rows")
	[ "$got" = "[[\"${WANT[$node]}\",\"${WANT[$node]}\"]]" ] ||
		fail "fleet page: $node shows $got, want ${WANT[$node]}"
done
[ "$(jq length <<<"$rows")" = "${#WANT[@]}" ] || fail "fleet page: $(jq length <<<"$rows") rows, want ${#WANT[@]}"
got=$(js 'return Array.from(document.querySelectorAll("table.types tr[data-type]")).map(r =>
  [r.dataset.type, r.querySelector("[data-flag]") ? r.querySelector("[data-flag]").dataset.flag : ""])')
[ "$got" = '[["g5.48xlarge",""],["p4d.24xlarge",""],["p5.48xlarge",""],["p7.48xlarge","conflict"]]' ] ||
	fail "fleet page: types and flags $got"
[ "$(js 'return document.getElementById("inflight").dataset.watching')" = '"false"' ] ||
	fail "fleet page: the in-flight section should say no controller watches"
inert "fleet page"
full 1400 "$ART/fleet.png"
# a node of the extra's type (its GPU model is not the node's)
report gpu-x p5.48xlarge --instance-type x9.48xlarge

# the filter form, submitted as a person would (no script on the page)
js 'document.querySelector("select[name=verdict]").value = "drift"; return 1' >/dev/null
wd POST "$S/element" '{"using": "css selector", "value": "form.filters button"}'
wd POST "$S/element/$(jq -r '.value | to_entries[0].value' "$TMP/wd.json")/click" '{}'
got=$(js 'return [location.search, Array.from(document.querySelectorAll("table.nodes tr[data-node]")).map(r => r.dataset.node)]')
[ "$got" = '["?type=&verdict=drift&plannable=",["gpu-b","gpu-x","new-3"]]' ] ||
	fail "filter form (verdict drift): $got"
# paging: 3 rows a page, following "next" until there is none
go "$BASE/?limit=3"
seen=""
for _ in 1 2 3 4 5; do
	seen="$seen$(js 'return Array.from(document.querySelectorAll("table.nodes tr[data-node]")).map(r => r.dataset.node).join(" ")' | tr -d '"') "
	next=$(js 'const a = document.querySelector("a[rel=next]"); return a ? a.href : ""' | tr -d '"')
	[ -n "$next" ] || break
	go "$next"
done
[ "$seen" = "gpu-a gpu-b gpu-c gpu-d gpu-x new-1 new-2 new-3 " ] || fail "paging: saw '$seen'"

# ---- the drifted node: the missing devices on the picture ----
go "$BASE/nodes/gpu-b"
size 1600 1100
got=$(js 'return Array.from(document.querySelectorAll("svg g.dev[data-mark=missing]")).map(g =>
  [g.dataset.kind, g.closest("g.root").dataset.root]).sort()')
[ "$got" = '[["efa","pci0000:44"],["efa","pci0000:44"],["gpu","pci0000:99"]]' ] ||
	fail "gpu-b: missing devices drawn $got, want 2 EFAs on pci0000:44 and a GPU on pci0000:99"
# each one inside its root's box, with a size, and on top where it is drawn
got=$(js 'return Array.from(document.querySelectorAll("svg g.dev[data-mark=missing]")).map(g => {
  g.scrollIntoView({block: "center"});
  const d = g.querySelector("rect").getBoundingClientRect();
  const r = g.closest("g.root").querySelector("rect").getBoundingClientRect();
  const hit = document.elementFromPoint(d.x + d.width / 2, d.y + 4);
  return d.width > 100 && d.height > 20 && d.left >= r.left && d.right <= r.right &&
    d.top >= r.top && d.bottom <= r.bottom && g.contains(hit) &&
    getComputedStyle(g).visibility === "visible";
})')
[ "$got" = '[true,true,true]' ] || fail "gpu-b: a missing device is not visibly inside its root: $got"
[ "$(js 'return document.querySelector("g.root[data-root=\"pci0000:99\"]").dataset.mark')" = '"short"' ] ||
	fail "gpu-b: root pci0000:99 should be marked short"
got=$(js 'return Array.from(document.querySelectorAll("ul.diffs li")).length + " " +
  document.querySelectorAll("table.rules tbody tr").length')
[ "$got" = '"5 5"' ] || fail "gpu-b: differences and DeviceTaintRules beside the picture: $got"
inert "gpu-b's page"
# the screenshot: the missing devices' fill is in the picture
js 'window.scrollTo(0, 0); return 1' >/dev/null
shot "$ART/node-drift.png"
PICTURE=$(js 'const r = document.querySelector("svg.topology").getBoundingClientRect();
  return [Math.round(r.x), Math.round(r.y), Math.round(r.width), Math.round(r.height)]')
MISSING_RGB=$(grep -o 'DRAW_MISSING\] = { "#[0-9a-f]*' "$ROOT/draw/draw_svg.c" | grep -o '#.*')
[ -n "$MISSING_RGB" ] || fail "the missing fill colour not found in draw_svg.c"
# count PNG RECT: pixels of the missing fill inside RECT of the PNG, counted
# by the browser itself (an <img> of the PNG on a canvas)
count() {
	local b64="$TMP/b64"
	base64 -w0 "$1" >"$b64"
	jq -nc --rawfile png "$b64" --argjson rect "$2" --arg rgb "$MISSING_RGB" '{args: [$png, $rect, $rgb],
	  script: "const [png, r, rgb] = arguments, done = arguments[arguments.length - 1];
	    const want = [1, 3, 5].map(i => parseInt(rgb.substr(i, 2), 16));
	    const img = new Image();
	    img.onerror = () => done(-1);
	    img.onload = () => { const c = document.createElement(\"canvas\");
	      c.width = img.width; c.height = img.height;
	      const x = c.getContext(\"2d\"); x.drawImage(img, 0, 0);
	      const d = x.getImageData(r[0], r[1], r[2], r[3]).data; let n = 0;
	      for (let i = 0; i < d.length; i += 4)
	        if (Math.abs(d[i] - want[0]) <= 1 && Math.abs(d[i + 1] - want[1]) <= 1 &&
	            Math.abs(d[i + 2] - want[2]) <= 1) n++;
	      done(n); };
	    img.src = \"data:image/png;base64,\" + png;"}' >"$TMP/count.json"
	wd POST "$S/execute/async" "@$TMP/count.json"
	jq -r '.value' "$TMP/wd.json"
}
drift_px=$(count "$ART/node-drift.png" "$PICTURE")
go "$BASE/nodes/gpu-a"
js 'window.scrollTo(0, 0); return 1' >/dev/null
shot "$ART/node-match.png"
match_px=$(count "$ART/node-match.png" "$(js 'const r = document.querySelector("svg.topology").getBoundingClientRect();
  return [Math.round(r.x), Math.round(r.y), Math.round(r.width), Math.round(r.height)]')")
# three ghost cards of about 190x38 px of fill each
[ "${drift_px:-0}" -gt 15000 ] 2>/dev/null || fail "screenshot: the missing devices' colour covers $drift_px px of gpu-b's picture"
[ "$match_px" = 0 ] || fail "screenshot: $match_px px of the missing colour in gpu-a's picture"
go "$BASE/nodes/gpu-b"
full 1600 "$ART/node-topology.png"

# ---- a hostile agent ----
expect 0 "$CLIENT" hostile "127.0.0.1:$PORT" --insecure evil-1 "$TMP/hostile" "$EVIL_ROOT" &&
	has "$TMP/out" '^status=OK$' "the hostile report is taken"
go "$BASE/"
inert "fleet page with the hostile node"
got=$(js 'const r = document.querySelector("tr[data-node=\"evil-1\"]");
  return [r.dataset.verdict, r.querySelectorAll("td")[1].textContent]')
[ "$got" = "$(jq -nc --arg t "$EVIL_TYPE" '["unknown", $t]')" ] ||
	fail "fleet page: the hostile type as text: $got"
go "$BASE/nodes/evil-1"
inert "the hostile node's page"
got=$(js 'return [document.querySelector("h1").firstChild.textContent.trim(),
  document.querySelector("dl.facts a").textContent,
  Array.from(document.querySelectorAll("g.root")).map(g => g.dataset.root).filter(r => r !== undefined && !r.startsWith("pci0000")),
  document.querySelector("dl.facts").textContent.includes("pwned=\u0027version\u0027")]')
[ "$got" = "$(jq -nc --arg t "$EVIL_TYPE" --arg r "$EVIL_ROOT" '["evil-1", $t, [$r], true]')" ] ||
	fail "the hostile node's page: strings as text: $got"
# the type's link, followed: the name survives the URL
go "$(js 'return document.querySelector("dl.facts a").href' | jq -r .)"
inert "the hostile type's page"
got=$(js 'return document.querySelector("h1").textContent')
[ "$got" = "$(jq -nc --arg t "$EVIL_TYPE" '$t')" ] || fail "the hostile type's page: h1 $got"
# the picture alone, as a file: still well-formed XML with the strings as text
go "$BASE/nodes/evil-1?o=svg"
got=$(js 'return [document.documentElement.localName, document.getElementsByTagName("parsererror").length,
  document.querySelectorAll("script").length,
  Array.from(document.querySelectorAll("g.root")).some(g => g.dataset.root === arguments[0])]' \
	"$(jq -nc --arg r "$EVIL_ROOT" '[$r]')")
[ "$got" = '["svg",0,0,true]' ] || fail "the hostile node's SVG: $got"
js 'return document.body ? document.body.dataset.pwned || null : null' | grep -qx null || fail "the hostile SVG ran something"
# the hostile model (an hwdb extra's productName) drawn as text
go "$BASE/types/x9.48xlarge"
inert "x9.48xlarge's page"
js 'return Array.from(document.querySelectorAll("section.entry g.dev text")).some(t => t.textContent.includes("<script>document.body"))' |
	grep -qx true || fail "x9.48xlarge: the extra's product name is not drawn as text"

# ---- the same drawing from the command line ----
expect 4 "$AGENT" verify --sysfs-root "$FX/p5.48xlarge-degraded" >/dev/null
expect 0 "$AGENT" probe --sysfs-root "$FX/p5.48xlarge-degraded" -o svg && cp "$TMP/out" "$TMP/node.svg"
[ "$(grep -o 'data-mark="missing"' "$TMP/node.svg" | wc -l)" = 3 ] || fail "probe -o svg: 3 missing devices"
has "$TMP/node.svg" '^<\?xml version="1.0"' "probe -o svg: a file of its own"
has "$TMP/node.svg" 'GPU count: hwdb has 8 for p5.48xlarge, this node has 7</text>' "probe -o svg: verify's differences"
expect 0 "$AGENT" probe --sysfs-root "$FX/p5.48xlarge" --instance-type x9.48xlarge \
	--hwdb-extra "$TMP/x9.yaml" -o svg &&
	[ "$(grep -o 'data-mark="wrong-model"' "$TMP/out" | wc -l)" = 8 ] || fail "probe -o svg --hwdb-extra: 8 GPUs of another model"
expect 2 "$AGENT" probe -o png && has "$TMP/err" 'text, json, yaml or svg' "probe: the formats named"
expect 0 "$BIN" hwdb show p5.48xlarge -o svg && cp "$TMP/out" "$TMP/p5.svg"
[ "$(grep -o 'class="dev ' "$TMP/p5.svg" | wc -l)" = 40 ] || fail "hwdb show -o svg: 40 devices"
expect 0 "$BIN" hwdb show x9.48xlarge --hwdb-extra "$TMP/x9.yaml" -o svg && cp "$TMP/out" "$TMP/x9.svg"
expect 1 "$BIN" hwdb show p9.nope -o svg
for f in node p5 x9; do
	go "file://$TMP/$f.svg"
	got=$(js 'return [document.documentElement.localName, document.getElementsByTagName("parsererror").length,
	  document.querySelectorAll("script, [onload], [onerror]").length]')
	[ "$got" = '["svg",0,0]' ] || fail "$f.svg in the browser: $got"
done

# ---- sizes, JSON, plain HTTP ----
curl -s --noproxy '*' -o "$TMP/p5.html" "$BASE/nodes/gpu-b"
bytes=$(wc -c <"$TMP/p5.html")
[ "$bytes" -lt 204800 ] || fail "gpu-b's page is $bytes bytes (over 200 KB)"
has "$TMP/p5.html" 'data-mark="missing"' "the picture is in the HTML itself (no script draws it)"
for what in nodes types; do
	curl -s --noproxy '*' -o "$TMP/$what.json" "$BASE/$what.json"
	expect 0 "$BIN" "$what" --coordinator "127.0.0.1:$PORT" --insecure -o json &&
		{ cmp -s "$TMP/out" "$TMP/$what.json" || fail "/$what.json differs from dratopo $what -o json"; }
done
curl -s --noproxy '*' -D "$TMP/headers" -o /dev/null "$BASE/"
has "$TMP/headers" "^Content-Security-Policy: default-src 'none'" "CSP header"
code=$(curl -s --noproxy '*' -o /dev/null -w '%{http_code}' -X POST "$BASE/")
[ "$code" = 405 ] || fail "POST / answered $code, want 405 (read-only)"

if [ "${DRATOPO_SCREENSHOTS:-}" = write ]; then
	cp "$ART/fleet.png" "$ROOT/docs/img/page-fleet.png"
	cp "$ART/node-topology.png" "$ROOT/docs/img/page-node.png"
fi
no_sanitizer_report "$TMP/coord.log" "dratopo-coordinator"
e2e_finish "screenshots in $ART"
