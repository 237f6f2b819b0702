// hwdb-import: turns public instance-type facts into hwdb's data files.
//
// It reads, as data only (nothing of theirs is compiled or linked):
//   - Karpenter's AWS provider (github.com/aws/karpenter-provider-aws, a Go
//     module): the EFA DRA metadata per instance type (which types have
//     EFAs, how many, the attributes DRANET publishes), which types have
//     NVIDIA GPU metadata, the network cards (vpclimits), the network
//     bandwidth, and the on-demand prices it ships (us-east-1, GovCloud);
//   - the ec2instances.info data set as github.com/cristim/ec2-instances-info
//     ships it (data/instances.json): vCPUs, memory, architecture and Linux
//     on-demand prices per region;
//   - eksctl's instance table (github.com/weaveworks/eksctl,
//     pkg/utils/instance/instance_types.go): EFA support, CPU architecture
//     and Neuron devices, as a second source;
//   - two files beside this one, transcribed by hand from AWS's documentation:
//     aws-specs.tsv (vCPUs, memory, architecture and accelerators of types the
//     ec2instances.info data predates, from the EC2 Instance Types guide) and
//     aws-efa-generations.txt (the EFA version of every EFA type, from the EC2
//     user guide's EFA page), each naming its sources in its header.
//
// and writes
//   - hwdb/efa-instance-types.yaml: every instance type Karpenter models
//     EFAs on that has no NVIDIA GPU (those live, hand-kept, in
//     hwdb/instance-types.yaml), one entry each, families grouped;
//   - hwdb/prices.yaml: on-demand prices per region for every type of both
//     files, regions other than us-east-1 (whose price is the entry's
//     onDemandPricePerHour).
//
// Every disagreement between two sources is printed on stderr; the facts
// written are the primary source's, and the data files say which that is.
// tools/hwdb-import/run.sh downloads the pinned module versions and runs it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Versions of the sources, written into the data files.
type sources struct {
	karpenter, ec2info, eksctl string
}

// ---- Go sources as data ----

// varValue returns the composite literal assigned to the package-level var
// name in file.
func varValue(file, name string) (*ast.CompositeLit, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if n.Name == name && i < len(vs.Values) {
					if cl, ok := vs.Values[i].(*ast.CompositeLit); ok {
						return cl, nil
					}
				}
			}
		}
	}
	return nil, fmt.Errorf("%s: no var %s", file, name)
}

func str(e ast.Expr) string {
	if b, ok := e.(*ast.BasicLit); ok && b.Kind == token.STRING {
		s, _ := strconv.Unquote(b.Value)
		return s
	}
	return ""
}

func num(e ast.Expr) float64 {
	if b, ok := e.(*ast.BasicLit); ok {
		v, _ := strconv.ParseFloat(b.Value, 64)
		return v
	}
	return math.NaN()
}

// field returns the value of key k in a keyed composite literal.
func field(cl *ast.CompositeLit, k string) ast.Expr {
	for _, e := range cl.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			if id, ok := kv.Key.(*ast.Ident); ok && id.Name == k {
				return kv.Value
			}
		}
	}
	return nil
}

func lit(e ast.Expr) *ast.CompositeLit {
	if u, ok := e.(*ast.UnaryExpr); ok {
		e = u.X
	}
	cl, _ := e.(*ast.CompositeLit)
	return cl
}

// An attribute as Karpenter's metadata types it.
type attr struct {
	name, kind, value string // kind: string, bool, int, version
}

type efaMeta struct {
	count int
	attrs []attr
}

// The first device's attributes stand for all (Karpenter lists identical
// devices for the types it added in v1.15.2); a type whose devices differ
// is reported.
func readEFA(file string) (map[string]efaMeta, error) {
	cl, err := varValue(file, "EFAMetadataByInstanceType")
	if err != nil {
		return nil, err
	}
	out := map[string]efaMeta{}
	for _, e := range cl.Elts {
		kv := e.(*ast.KeyValueExpr)
		meta := lit(kv.Value)
		var m efaMeta
		m.count = int(num(field(meta, "Count")))
		devs := lit(field(meta, "Devices"))
		var first string
		for i, d := range devs.Elts {
			attrs := readAttrs(lit(field(lit(d), "Attributes")))
			key := fmt.Sprint(shared(attrs))
			if i == 0 {
				m.attrs, first = attrs, key
			} else if key != first {
				warn("%s: EFA devices differ in attributes; hwdb keeps the first's", str(kv.Key))
				break
			}
		}
		out[str(kv.Key)] = m
	}
	return out, nil
}

// The attributes every device of a type shares: all but where it sits.
func shared(attrs []attr) []attr {
	var out []attr
	for _, a := range attrs {
		if a.name != "resource.kubernetes.io/pcieRoot" && a.name != "dra.net/numaNode" {
			out = append(out, a)
		}
	}
	return out
}

func readAttrs(cl *ast.CompositeLit) []attr {
	var out []attr
	for _, e := range cl.Elts {
		kv := e.(*ast.KeyValueExpr)
		v := lit(kv.Value)
		for _, f := range v.Elts {
			fkv := f.(*ast.KeyValueExpr)
			call, ok := fkv.Value.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				continue
			}
			a := attr{name: str(kv.Key)}
			switch fkv.Key.(*ast.Ident).Name {
			case "StringValue":
				a.kind, a.value = "string", str(call.Args[0])
			case "VersionValue":
				a.kind, a.value = "version", str(call.Args[0])
			case "BoolValue":
				a.kind, a.value = "bool", call.Args[0].(*ast.Ident).Name
			case "IntValue":
				a.kind, a.value = "int", call.Args[0].(*ast.BasicLit).Value
			}
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func readKeys(file, name string) (map[string]bool, error) {
	cl, err := varValue(file, name)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, e := range cl.Elts {
		out[str(e.(*ast.KeyValueExpr).Key)] = true
	}
	return out, nil
}

func readNetworkCards(file string) (map[string]int, error) {
	cl, err := varValue(file, "Limits")
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, e := range cl.Elts {
		kv := e.(*ast.KeyValueExpr)
		out[str(kv.Key)] = len(lit(field(lit(kv.Value), "NetworkCards")).Elts)
	}
	return out, nil
}

func readNumbers(cl *ast.CompositeLit) map[string]float64 {
	out := map[string]float64{}
	for _, e := range cl.Elts {
		kv := e.(*ast.KeyValueExpr)
		out[str(kv.Key)] = num(kv.Value)
	}
	return out
}

// region -> type -> USD per hour.
func readPrices(file, name string) (map[string]map[string]float64, error) {
	cl, err := varValue(file, name)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]float64{}
	for _, e := range cl.Elts {
		kv := e.(*ast.KeyValueExpr)
		out[str(kv.Key)] = readNumbers(lit(kv.Value))
	}
	return out, nil
}

// "generated at 2026-07-20T13:44:30Z for us-east-1" -> "2026-07-20".
func generatedDate(file string) string {
	b, _ := os.ReadFile(file)
	m := regexp.MustCompile(`(?:generated at|This file was generated at) (\d{4}-\d\d-\d\d)`).FindSubmatch(b)
	if m == nil {
		return "undated"
	}
	return string(m[1])
}

// ---- ec2instances.info ----

type ec2info struct {
	InstanceType string          `json:"instance_type"`
	VCPU         json.Number     `json:"vCPU"`
	Memory       json.Number     `json:"memory"`
	Arch         []string        `json:"arch"`
	GPU          json.Number     `json:"GPU"`
	GPUModel     *string         `json:"GPU_model"`
	FPGA         json.Number     `json:"FPGA"`
	Pricing      map[string]osPr `json:"pricing"`
}

type osPr struct {
	Linux *struct {
		OnDemand json.RawMessage `json:"ondemand"`
	} `json:"linux"`
}

func (p osPr) linux() (float64, bool) {
	if p.Linux == nil || len(p.Linux.OnDemand) == 0 {
		return 0, false
	}
	var s string
	if json.Unmarshal(p.Linux.OnDemand, &s) != nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && v > 0
}

func readEC2Info(file string) (map[string]ec2info, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var list []ec2info
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if err := d.Decode(&list); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	out := map[string]ec2info{}
	for _, i := range list {
		out[i.InstanceType] = i
	}
	return out, nil
}

// ---- eksctl ----

type eksInfo struct {
	efa          bool
	arch, neuron string
}

func readEksctl(file string) (map[string]eksInfo, error) {
	cl, err := varValue(file, "InstanceTypes")
	if err != nil {
		return nil, err
	}
	out := map[string]eksInfo{}
	for _, e := range cl.Elts {
		c := lit(e)
		arch := str(field(c, "CPUArch"))
		if arch == "x86-64" {
			arch = "amd64"
		}
		efa, _ := field(c, "EFASupported").(*ast.Ident)
		out[str(field(c, "InstanceType"))] = eksInfo{
			efa: efa != nil && efa.Name == "true", arch: arch,
			neuron: str(field(c, "NeuronDeviceType")),
		}
	}
	return out, nil
}

// ---- AWS's documentation, transcribed (aws-specs.tsv, aws-efa-generations.txt) ----

// One row of aws-specs.tsv.
type awsSpec struct {
	vcpu          int
	memMiB        int64
	arch, source  string
	second, accel string // "" where the file has "-"
}

// The pages aws-specs.tsv cites, by the key its source column uses.
var awsSpecPages = map[string]string{
	"co": "compute optimized", "gp": "general purpose", "mo": "memory optimized",
	"so": "storage optimized", "ac": "accelerated computing", "hpc": "high performance computing",
}

func readAWSSpecs(file string) (map[string]awsSpec, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	out := map[string]awsSpec{}
	for i, l := range strings.Split(string(b), "\n") {
		if l == "" || l[0] == '#' {
			continue
		}
		f := strings.Split(l, "\t")
		if len(f) != 7 {
			return nil, fmt.Errorf("%s:%d: %d fields, want 7", file, i+1, len(f))
		}
		v, err1 := strconv.Atoi(f[1])
		m, err2 := strconv.ParseFloat(f[2], 64)
		if err1 != nil || err2 != nil || v <= 0 || m <= 0 || (f[3] != "amd64" && f[3] != "arm64") ||
			awsSpecPages[f[4]] == "" {
			return nil, fmt.Errorf("%s:%d: bad row %q", file, i+1, l)
		}
		if _, dup := out[f[0]]; dup {
			return nil, fmt.Errorf("%s:%d: %s twice", file, i+1, f[0])
		}
		s := awsSpec{vcpu: v, memMiB: int64(math.Round(m * 1024)), arch: f[3], source: f[4]}
		if f[5] != "-" {
			s.second = f[5]
		}
		if f[6] != "-" {
			s.accel = f[6]
		}
		out[f[0]] = s
	}
	return out, nil
}

// "8 x Qualcomm AI100" -> 8, "Qualcomm AI100".
func splitAccel(s string) (int, string) {
	n, name, ok := strings.Cut(s, " x ")
	if c, err := strconv.Atoi(n); ok && err == nil {
		return c, name
	}
	return 0, s
}

// type -> EFA version (1..4) from aws-efa-generations.txt.
func readEFAGenerations(file string) (map[string]int, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	for i, l := range strings.Split(text, "\n") {
		if l == "" || l[0] == '#' {
			continue
		}
		head, rest, ok := strings.Cut(l, ":")
		v, err := strconv.Atoi(strings.TrimPrefix(head, "v"))
		if !ok || err != nil || !strings.HasPrefix(head, "v") || v < 1 {
			return nil, fmt.Errorf("%s: line %d: want \"v<N>: TYPE...\"", file, i+1)
		}
		for _, t := range strings.Fields(rest) {
			if _, dup := out[t]; dup {
				return nil, fmt.Errorf("%s: %s listed twice", file, t)
			}
			out[t] = v
		}
	}
	return out, nil
}

// The PCI device id the Linux efa driver binds for EFA version v.
func efaDevice(v int) string { return fmt.Sprintf("efa%d", v-1) }

// The rule "EFA vN is device efa<N-1>" must hold for every type whose id was
// scraped from live nodes (the hand-kept GPU file); otherwise it is not used.
func checkEFARule(gens map[string]int, scraped map[string]string) error {
	checked := 0
	for name, id := range scraped {
		v, ok := gens[name]
		if !ok {
			continue
		}
		if want := "1d0f:" + efaDevice(v); id != want {
			return fmt.Errorf("%s: AWS lists EFA v%d (%s by the rule), the scrape has %s", name, v, want, id)
		}
		checked++
	}
	if checked == 0 {
		return fmt.Errorf("no scraped type to check the EFA version rule against")
	}
	fmt.Fprintf(os.Stderr, "hwdb-import: EFA version -> device id rule holds on all %d scraped types\n", checked)
	return nil
}

// Fill the size from aws-specs.tsv where ec2instances.info has none, and
// compare where it has one (that checks the transcription).
func useSpec(t *typeFacts, sp awsSpec, inInfo bool) {
	if inInfo {
		if sp.vcpu != t.vcpu || sp.memMiB != t.memMiB || sp.arch != t.arch {
			warn("%s: %d vCPUs %d MiB %s (aws-specs.tsv) vs %d %d %s (ec2instances.info)", t.name,
				sp.vcpu, sp.memMiB, sp.arch, t.vcpu, t.memMiB, t.arch)
		}
		return
	}
	t.vcpu, t.memMiB, t.arch = sp.vcpu, sp.memMiB, sp.arch
	n := "vCPUs, memory and architecture: AWS's EC2 Instance Types guide, " + awsSpecPages[sp.source] +
		" specifications (tools/hwdb-import/aws-specs.tsv)"
	if sp.second != "" {
		n += "; the same figures observed independently (" + sp.second + ")"
	}
	t.notes = append(t.notes, n+".")
}

func attrNamed(attrs []attr, name string) *attr {
	for i := range attrs {
		if attrs[i].name == name {
			return &attrs[i]
		}
	}
	return nil
}

// ---- The hand-kept GPU file ----

// Names and us-east-1 prices of hwdb/instance-types.yaml's entries, and the
// EFA PCI ids (vendor:device) of those scraped from live nodes
// (draMetadata: true).
func readGPUFile(file string) (map[string]float64, map[string]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	prices, efaIDs, scraped := map[string]float64{}, map[string]string{}, map[string]bool{}
	name, inEFA := "", false
	for _, l := range strings.Split(string(b), "\n") {
		if l == "  draMetadata: true" {
			scraped[name] = true
		}
		if strings.HasPrefix(l, "- name: ") {
			name, inEFA = strings.TrimSpace(l[8:]), false
			prices[name] = math.NaN()
		} else if v, ok := strings.CutPrefix(l, "  onDemandPricePerHour: "); ok && name != "" {
			if p, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				prices[name] = p
			}
		} else if strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   ") {
			inEFA = l == "  efa:"
		} else if v, ok := strings.CutPrefix(l, "    pciId: "); ok && inEFA {
			if id, err := strconv.Unquote(strings.TrimSpace(v)); err == nil {
				efaIDs[name] = id
			}
		}
	}
	for n := range efaIDs {
		if !scraped[n] {
			delete(efaIDs, n)
		}
	}
	return prices, efaIDs, nil
}

// ---- Output ----

var warnings int

func warn(f string, a ...any) {
	warnings++
	fmt.Fprintf(os.Stderr, "hwdb-import: "+f+"\n", a...)
}

func family(t string) string { return t[:strings.IndexByte(t, '.')] }

// Sizes in a family: by vCPUs where known, then by name.
func sizeLess(a, b string, vcpu map[string]int) bool {
	if vcpu[a] != vcpu[b] {
		return vcpu[a] < vcpu[b]
	}
	return a < b
}

func yamlValue(a attr) string {
	switch a.kind {
	case "version":
		return "{version: " + a.value + "}"
	case "string":
		if strings.ContainsAny(a.value, ":#{}[],&*!|>'\"%@`") || a.value == "true" || a.value == "false" {
			return strconv.Quote(a.value)
		}
	}
	return a.value
}

func price(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }

type typeFacts struct {
	name      string
	vcpu      int
	memMiB    int64
	arch      string
	price     float64
	hasPrice  bool
	efa       efaMeta
	cards     int
	bandwidth float64 // Gbps; 0 unknown
	accel     string
	accelN    int
	efaGen    int // EFA version from aws-efa-generations.txt; 0 unknown
	notes     []string
}

func writeTypes(path string, src sources, types []typeFacts) error {
	var b strings.Builder
	fmt.Fprintf(&b, `# hwdb/efa-instance-types.yaml - every EC2 instance type with EFAs and no NVIDIA GPU,
# one entry each, families grouped. GENERATED by tools/hwdb-import (run.sh); do not edit:
# change the generator or its sources and run it again. NVIDIA GPU types, EFA or not, are in
# instance-types.yaml. docs/hwdb.md describes every field.
#
# Where each fact comes from:
#   the set of types, efa.count, efa.attributes (what DRANET publishes as Karpenter models it)
#                          Karpenter AWS provider %s, pkg/providers/drametadata/zz_generated_efa_metadata.go
#   maxEfaInterfaces       the same count (Karpenter attaches every EFA the type allows)
#   networkCards           Karpenter %s, pkg/providers/instancetype/zz_generated.vpclimits.go
#   networkBandwidthGbps   Karpenter %s, pkg/providers/instancetype/zz_generated.bandwidth.go
#   onDemandPricePerHour   Karpenter %s, pkg/providers/pricing/zz_generated.pricing_aws.go
#                          (us-east-1, Linux on-demand); null: no us-east-1 offering
#   vcpu, memoryMiB, arch  ec2instances.info data as github.com/cristim/ec2-instances-info
#                          %s ships it; for types it predates, AWS's EC2 Instance Types
#                          guide (tools/hwdb-import/aws-specs.tsv, which names the pages);
#                          arch checked against eksctl %s (pkg/utils/instance/instance_types.go);
#                          null: no source has the type
#   accelerators           eksctl %s (Neuron device kind); count: ec2instances.info, else
#                          the guide's Accelerators column
#   efa.pciId, dra.net/pciSubsystem
#                          the EFA version AWS's EFA page lists for the type
#                          (tools/hwdb-import/aws-efa-generations.txt): EFA vN is device
#                          1d0f:efa<N-1>, a rule checked against every scraped type;
#                          null: the page does not list the type
# The PCIe roots of these EFAs were not scraped: draMetadata is false (count only), and
# dratopo-coordinator learns the grouping from the first nodes.
instanceTypes:
`, src.karpenter, src.karpenter, src.karpenter, src.karpenter, src.ec2info, src.eksctl, src.eksctl)
	last := ""
	for _, t := range types {
		if f := family(t.name); f != last {
			fmt.Fprintf(&b, "\n# ---- %s ----\n", f)
			last = f
		}
		fmt.Fprintf(&b, "- name: %s\n", t.name)
		if t.vcpu > 0 {
			fmt.Fprintf(&b, "  vcpu: %d\n  memoryMiB: %d\n", t.vcpu, t.memMiB)
		} else {
			b.WriteString("  vcpu: null\n  memoryMiB: null\n")
		}
		if t.arch != "" {
			fmt.Fprintf(&b, "  arch: %s\n", t.arch)
		} else {
			b.WriteString("  arch: null\n")
		}
		if t.hasPrice {
			fmt.Fprintf(&b, "  onDemandPricePerHour: %s\n", price(t.price))
		} else {
			b.WriteString("  onDemandPricePerHour: null\n")
		}
		fmt.Fprintf(&b, "  draMetadata: false\n  maxEfaInterfaces: %d\n", t.efa.count)
		if t.cards > 0 {
			fmt.Fprintf(&b, "  networkCards: %d\n", t.cards)
		} else {
			b.WriteString("  networkCards: null\n")
		}
		if t.bandwidth > 0 {
			fmt.Fprintf(&b, "  networkBandwidthGbps: %s\n", price(t.bandwidth))
		}
		if t.efaGen > 0 {
			fmt.Fprintf(&b, "  efa:\n    pciId: \"1d0f:%s\"\n    attributes:\n", efaDevice(t.efaGen))
		} else {
			b.WriteString("  efa:\n    pciId: null\n    attributes:\n")
		}
		for _, a := range t.efa.attrs {
			fmt.Fprintf(&b, "      %s: %s\n", a.name, yamlValue(a))
		}
		fmt.Fprintf(&b, "    count: %d\n", t.efa.count)
		if t.accel != "" {
			if t.accelN > 0 {
				fmt.Fprintf(&b, "  accelerators: {kind: %s, count: %d}\n", strconv.Quote(t.accel), t.accelN)
			} else {
				fmt.Fprintf(&b, "  accelerators: {kind: %s, count: null}\n", strconv.Quote(t.accel))
			}
		}
		if len(t.notes) > 0 {
			b.WriteString("  notes:\n")
			for _, n := range t.notes {
				fmt.Fprintf(&b, "  - %s\n", strconv.Quote(n))
			}
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

type regionSrc struct {
	region, source string
	prices         map[string]float64
	dropped        []string
}

func writePrices(path string, regions []regionSrc, order []string) error {
	var b strings.Builder
	b.WriteString(`# hwdb/prices.yaml - on-demand prices (USD per hour, Linux) per region, for the types of
# instance-types.yaml and efa-instance-types.yaml. GENERATED by tools/hwdb-import (run.sh);
# do not edit. us-east-1's prices are the entries' onDemandPricePerHour and are not repeated
# here. Each region lists one map per family. A type missing from a region has no price hwdb
# knows there: it is not offered there, the source has none, or the source's price predates
# a price change (the region's "stale" list) and is left out rather than kept wrong.
regions:
`)
	for _, r := range regions {
		fmt.Fprintf(&b, "- region: %s\n  source: %s\n", r.region, strconv.Quote(r.source))
		if len(r.dropped) > 0 {
			fmt.Fprintf(&b, "  stale: [%s]\n", strings.Join(r.dropped, ", "))
		}
		b.WriteString("  prices:\n")
		var items []string
		last := ""
		flush := func() {
			if len(items) > 0 {
				fmt.Fprintf(&b, "  - {%s}\n", strings.Join(items, ", "))
				items = nil
			}
		}
		for _, t := range order {
			p, ok := r.prices[t]
			if !ok {
				continue
			}
			if family(t) != last {
				flush()
				last = family(t)
			}
			items = append(items, t+": "+price(p))
		}
		flush()
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "hwdb-import:", err)
		os.Exit(1)
	}
}

func main() {
	kp := flag.String("karpenter", "", "the karpenter-provider-aws module directory")
	kpVer := flag.String("karpenter-version", "", "its version")
	ei := flag.String("ec2info", "", "the ec2-instances-info module directory")
	eiVer := flag.String("ec2info-version", "", "its version")
	ek := flag.String("eksctl", "", "the eksctl module directory")
	ekVer := flag.String("eksctl-version", "", "its version")
	gpuFile := flag.String("gpu-types", "hwdb/instance-types.yaml", "the hand-kept GPU file")
	outTypes := flag.String("out-types", "hwdb/efa-instance-types.yaml", "EFA types file to write")
	outPrices := flag.String("out-prices", "hwdb/prices.yaml", "prices file to write")
	specsFile := flag.String("aws-specs", "aws-specs.tsv", "sizes transcribed from AWS's documentation")
	gensFile := flag.String("efa-generations", "aws-efa-generations.txt", "EFA versions from AWS's documentation")
	flag.Parse()
	if *kp == "" || *ei == "" || *ek == "" {
		fmt.Fprintln(os.Stderr, "usage: hwdb-import -karpenter DIR -ec2info DIR -eksctl DIR [...]; see run.sh")
		os.Exit(2)
	}
	src := sources{"v" + strings.TrimPrefix(*kpVer, "v"), *eiVer, *ekVer}
	prov := filepath.Join(*kp, "pkg/providers")

	efa, err := readEFA(filepath.Join(prov, "drametadata/zz_generated_efa_metadata.go"))
	must(err)
	gpuMeta, err := readKeys(filepath.Join(prov, "drametadata/zz_generated_gpu_metadata.go"), "GPUMetadataByInstanceType")
	must(err)
	cards, err := readNetworkCards(filepath.Join(prov, "instancetype/zz_generated.vpclimits.go"))
	must(err)
	bwl, err := varValue(filepath.Join(prov, "instancetype/zz_generated.bandwidth.go"), "InstanceTypeBandwidthMegabits")
	must(err)
	bw := readNumbers(bwl)
	awsFile := filepath.Join(prov, "pricing/zz_generated.pricing_aws.go")
	govFile := filepath.Join(prov, "pricing/zz_generated.pricing_aws_us_gov.go")
	kpPrices, err := readPrices(awsFile, "InitialOnDemandPricesAWS")
	must(err)
	govPrices, err := readPrices(govFile, "InitialOnDemandPricesUSGov")
	must(err)
	info, err := readEC2Info(filepath.Join(*ei, "data/instances.json"))
	must(err)
	eks, err := readEksctl(filepath.Join(*ek, "pkg/utils/instance/instance_types.go"))
	must(err)
	gpuTypes, scrapedEFA, err := readGPUFile(*gpuFile)
	must(err)
	specs, err := readAWSSpecs(*specsFile)
	must(err)
	gens, err := readEFAGenerations(*gensFile)
	must(err)
	must(checkEFARule(gens, scrapedEFA))
	use1 := kpPrices["us-east-1"]

	// The EFA-only types.
	var types []typeFacts
	vcpus := map[string]int{}
	for name, m := range efa {
		if _, ok := gpuTypes[name]; ok {
			continue
		}
		if gpuMeta[name] {
			warn("%s: Karpenter has NVIDIA GPU metadata for it, but %s has no entry", name, *gpuFile)
			continue
		}
		t := typeFacts{name: name, efa: m, cards: cards[name]}
		if t.cards == 0 {
			warn("%s: no vpclimits entry (network cards)", name)
		}
		if m.count > t.cards && t.cards > 0 {
			warn("%s: %d EFAs on %d network cards", name, m.count, t.cards)
		}
		if v, ok := bw[name]; ok && v > 0 {
			t.bandwidth = v / 1000
		}
		t.price, t.hasPrice = use1[name]
		ie, inInfo := info[name]
		ek, inEks := eks[name]
		if inInfo {
			v, _ := ie.VCPU.Int64()
			g, _ := ie.Memory.Float64()
			t.vcpu, t.memMiB = int(v), int64(math.Round(g*1024))
			for _, a := range ie.Arch {
				switch a {
				case "x86_64":
					t.arch = "amd64"
				case "arm64":
					t.arch = "arm64"
				}
			}
		}
		if sp, ok := specs[name]; ok {
			useSpec(&t, sp, inInfo)
		}
		if inEks {
			if t.arch == "" {
				t.arch = ek.arch
			} else if ek.arch != t.arch {
				warn("%s: arch %s (ec2instances.info) vs %s (eksctl)", name, t.arch, ek.arch)
			}
			if !ek.efa {
				warn("%s: eksctl says no EFA", name)
			}
			if ek.neuron != "" {
				t.accel = "AWS " + ek.neuron
				gm := ""
				if ie.GPUModel != nil {
					gm = *ie.GPUModel
				}
				if n, _ := ie.GPU.Int64(); n > 0 && (strings.Contains(gm, "Inferentia") ||
					strings.Contains(gm, "Trainium")) {
					t.accelN = int(n)
				}
			}
		}
		if n, _ := ie.FPGA.Int64(); n > 0 {
			t.accel, t.accelN = "FPGA", int(n)
		}
		if sp, ok := specs[name]; ok && sp.accel != "" && t.accelN == 0 {
			n, kind := splitAccel(sp.accel)
			if t.accel == "" {
				t.accel = kind
			}
			t.accelN = n
		}
		if t.efaGen = gens[name]; t.efaGen == 0 {
			t.notes = append(t.notes, "AWS's EFA page does not list its EFA version: the EFA's PCI "+
				"device id is unknown until a fleet's agents report it.")
		} else if a := attrNamed(t.efa.attrs, "dra.net/pciSubsystem"); a == nil {
			t.efa.attrs = append(t.efa.attrs, attr{"dra.net/pciSubsystem", "string", efaDevice(t.efaGen)})
			sort.Slice(t.efa.attrs, func(i, j int) bool { return t.efa.attrs[i].name < t.efa.attrs[j].name })
		} else if a.value != efaDevice(t.efaGen) {
			warn("%s: Karpenter publishes pciSubsystem %s, AWS lists EFA v%d", name, a.value, t.efaGen)
		}
		if t.vcpu == 0 {
			t.notes = append(t.notes, "No source reached has its vCPUs and memory (it is newer than the "+
				"ec2instances.info data "+src.ec2info+" and not in tools/hwdb-import/aws-specs.tsv): "+
				"the planner cannot size it until a fleet's agents report it or an extra file gives them.")
		}
		if t.arch == "" {
			t.notes = append(t.notes, "Architecture unknown (neither ec2instances.info nor eksctl "+src.eksctl+" has the type).")
		}
		if !t.hasPrice {
			t.notes = append(t.notes, "No us-east-1 on-demand price in Karpenter "+src.karpenter+
				" (not offered there); see prices.yaml for other regions.")
		}
		if t.accel != "" {
			t.notes = append(t.notes, t.accel+" accelerators are not modelled: hwdb publishes only "+
				"what DRANET does (the EFAs); no Neuron or FPGA device plugin or DRA driver is predicted.")
		}
		if inInfo {
			if p, ok := ie.Pricing["us-east-1"].linux(); ok && t.hasPrice && math.Abs(p-t.price) > 1e-6 {
				warn("%s: us-east-1 %.6f (Karpenter %s) vs %.6f (ec2instances.info %s)", name, t.price,
					src.karpenter, p, src.ec2info)
			}
		}
		vcpus[name] = t.vcpu
		types = append(types, t)
	}
	sort.Slice(types, func(i, j int) bool {
		a, b := types[i].name, types[j].name
		if family(a) != family(b) {
			return family(a) < family(b)
		}
		return sizeLess(a, b, vcpus)
	})
	for name := range gpuTypes {
		if m, ok := efa[name]; ok && m.count == 0 {
			warn("%s: Karpenter lists 0 EFAs", name)
		}
	}

	// Prices per region, for every type of both files.
	var order []string
	for _, t := range types {
		order = append(order, t.name)
	}
	var gpuNames []string
	for n := range gpuTypes {
		gpuNames = append(gpuNames, n)
	}
	sort.Strings(gpuNames)
	order = append(gpuNames, order...)
	sort.SliceStable(order, func(i, j int) bool { return family(order[i]) < family(order[j]) })

	// ec2instances.info's prices hold only where its us-east-1 price is
	// Karpenter's: a type whose price changed since is left out.
	stale := map[string]bool{}
	for _, n := range order {
		ie, ok := info[n]
		if !ok {
			continue
		}
		p, ok := ie.Pricing["us-east-1"].linux()
		k, kok := use1[n]
		if ok && kok && math.Abs(p-k) > 1e-6 {
			stale[n] = true
		}
		if !ok && kok {
			warn("%s: ec2instances.info has no us-east-1 Linux price; its regional prices are kept", n)
		}
	}
	regionSet := map[string]bool{}
	for _, ie := range info {
		for r := range ie.Pricing {
			regionSet[r] = true
		}
	}
	var regions []regionSrc
	var names []string
	// Regions, not Local or Wavelength Zones; China's prices are in CNY.
	isRegion := regexp.MustCompile(`^[a-z]{2}(-gov)?-[a-z]+-[0-9]$`)
	for r := range regionSet {
		if r != "us-east-1" && isRegion.MatchString(r) && !strings.HasPrefix(r, "cn-") {
			names = append(names, r)
		}
	}
	for r := range govPrices {
		if !regionSet[r] {
			names = append(names, r)
		}
	}
	sort.Strings(names)
	for _, r := range names {
		rs := regionSrc{region: r, prices: map[string]float64{}}
		if gp, ok := govPrices[r]; ok {
			rs.source = "Karpenter " + src.karpenter + " pricing_aws_us_gov.go, generated " + generatedDate(govFile)
			for _, n := range order {
				if p, ok := gp[n]; ok && p > 0 {
					rs.prices[n] = p
					if ip, ok := info[n].Pricing[r].linux(); ok && math.Abs(ip-p) > 1e-6 && !stale[n] {
						warn("%s in %s: %.6f (Karpenter) vs %.6f (ec2instances.info)", n, r, p, ip)
					}
				}
			}
		} else {
			rs.source = "ec2instances.info data, github.com/cristim/ec2-instances-info " + src.ec2info
			for _, n := range order {
				if p, ok := info[n].Pricing[r].linux(); ok {
					if stale[n] {
						rs.dropped = append(rs.dropped, n)
						continue
					}
					rs.prices[n] = p
				}
			}
		}
		if len(rs.prices) > 0 {
			regions = append(regions, rs)
		}
	}
	must(writeTypes(*outTypes, src, types))
	must(writePrices(*outPrices, regions, order))
	fmt.Fprintf(os.Stderr, "hwdb-import: %d EFA types without NVIDIA GPUs, %d regions besides us-east-1, %d warnings\n",
		len(types), len(regions), warnings)
}
