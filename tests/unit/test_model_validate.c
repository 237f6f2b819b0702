/* test_model_validate.c - every validation rule with its exact message.
 *
 * Each case is a small manifest and a message the validator must print for
 * it, word for word; a valid twin of each object checks that the rule does
 * not fire where it should not. */
#include <errno.h>
#include <string.h>

#include "dt_test.h"
#include "model.h"
#include "model_internal.h"
#include "strbuf.h"

struct vcase {
	const char *yaml;
	const char *want;               /* one full message; NULL: must be valid */
};

/* Wrappers that keep the cases short. */
#define CLAIM_HEAD "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n" \
		   "metadata: {name: c}\nspec:\n  devices:\n"
#define CLAIM(body) CLAIM_HEAD body
#define CP "t.yaml: document 1 (ResourceClaim default/c): "
#define SLICE_HEAD "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n" \
		   "spec:\n  driver: gpu.example.com\n  pool: {name: p, generation: 0, " \
		   "resourceSliceCount: 1}\n"
#define SLICE(body) SLICE_HEAD body
#define SP "t.yaml: document 1 (ResourceSlice s): "
#define DEVICE(body) SLICE("  nodeName: n1\n  devices:\n  - name: gpu-0\n" body)
#define CLASS(body) "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: k}\n" \
		    "spec:\n" body
#define KP "t.yaml: document 1 (DeviceClass k): "
#define POD(body) "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" body
#define PP "t.yaml: document 1 (Pod default/p): "
#define NP "t.yaml: document 1 (NodePool np): "
/* A valid NodePool with one requirement (a YAML flow map). */
#define NPREQ(req) "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: np}\n" \
	"spec:\n  template:\n    spec:\n      nodeClassRef: {group: g, kind: k, name: nc}\n" \
	"      requirements: [" req "]\n"
/* A NodeOverlay with the given spec lines, and its messages' prefix. */
#define OVL(body) "apiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: o}\n" \
		  "spec:\n" body
#define OVREQ(req) OVL("  requirements: [" req "]\n  price: '1'\n")
#define OP "t.yaml: document 1 (NodeOverlay o): "
#define RULE(body) "apiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\nmetadata: {name: r}\n" \
		   "spec:\n" body
#define RP "t.yaml: document 1 (DeviceTaintRule r): "
#define RULE_TAINT "  taint: {key: dratopo.io/drift, value: gpu-off-bus, effect: NoSchedule}\n"
#define COND(fields) RULE(RULE_TAINT) "status:\n  conditions:\n  - " fields "\n"
#define COND_TIME "lastTransitionTime: '2026-01-02T03:04:05Z'"
#define COND_OK "type: EvictionInProgress, status: 'False', reason: Idle, " COND_TIME
#define REQ1 "    requests:\n    - name: gpu\n      exactly: {deviceClassName: gpu.example.com}\n"
/* A NodePool with lines added to its template's spec (tspec) and its spec. */
#define NPOOL(tspec, spec) "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: np}\n" \
	"spec:\n  template:\n    spec:\n      nodeClassRef: {group: g, kind: k, name: nc}\n" \
	tspec spec
#define NPD(body) NPOOL("", "  disruption:\n" body)
#define NP_DURATION "should match '^(([0-9]+(s|m|h))+|Never)$'"
/* EC2NodeClasses: EC2R takes the whole spec after the role, EC2 adds to a
 * valid one, EC2AMI gives its amiSelectorTerms. */
#define EC2_HEAD "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: e}\n" \
		 "spec:\n"
#define EC2_TERMS "  subnetSelectorTerms: [{tags: {a: b}}]\n" \
		  "  securityGroupSelectorTerms: [{tags: {a: b}}]\n"
#define EC2_AMI "  amiSelectorTerms: [{alias: al2023@latest}]\n"
#define EC2R(body) EC2_HEAD "  role: r\n" body
#define EC2(body) EC2R(EC2_TERMS EC2_AMI body)
#define EC2AMI(terms) EC2R(EC2_TERMS "  amiSelectorTerms: " terms "\n")
#define EC2SG(terms) EC2R("  subnetSelectorTerms: [{tags: {a: b}}]\n" EC2_AMI \
			  "  securityGroupSelectorTerms: " terms "\n")
#define EP "t.yaml: document 1 (EC2NodeClass e): "
#define GO_TIME " as \"2006-01-02T15:04:05Z07:00\": cannot parse "
#define VOLUME_SIZE_PATTERN "should match '^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|[5][0-8][0-9]{3}|" \
	"59000)Gi|(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|[6][0-3][0-9]{3}|64000)G|([1-9]||[1-5][0-7]|58)" \
	"Ti|([1-9]||[1-5][0-9]|6[0-3]|64)T)$'"

static const struct vcase cases[] = {
	/* valid twins */
	{ CLAIM(REQ1), NULL },
	{ DEVICE("    attributes: {model: {string: A100}}\n"), NULL },
	{ CLASS("  selectors:\n  - cel: {expression: 'true'}\n"), NULL },
	{ POD("  containers: [{name: c, image: i}]\n"), NULL },
	{ RULE("  deviceSelector: {driver: gpu.nvidia.com, pool: node-1, device: gpu-0}\n"
	       RULE_TAINT), NULL },
	{ RULE("  deviceSelector: {}\n  taint: {key: k, effect: None}\n"), NULL },
	{ COND("{" COND_OK ", observedGeneration: 3, message: m}"), NULL },

	/* DeviceTaintRule */
	{ RULE("  deviceSelector: {driver: GPU_x}\n" RULE_TAINT),
	  RP "spec.deviceSelector.driver: Invalid value: \"GPU_x\": a lowercase RFC 1123 "
	  "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
	  "start and end with an alphanumeric character (e.g. 'example.com', regex used for "
	  "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')" },
	{ RULE("  deviceSelector: {pool: ''}\n" RULE_TAINT),
	  RP "spec.deviceSelector.pool: Required value" },
	{ RULE("  deviceSelector: {device: GPU-0}\n" RULE_TAINT),
	  RP "spec.deviceSelector.device: Invalid value: \"GPU-0\": a lowercase RFC 1123 label "
	  "must consist of lower case alphanumeric characters or '-', and must start and end "
	  "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
	  "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')" },
	{ RULE("  deviceSelector: {deviceClassName: gpu.example.com}\n" RULE_TAINT),
	  RP "spec.deviceSelector.deviceClassName: Forbidden: removed in Kubernetes 1.35: a "
	  "DeviceTaintRule selects by driver, pool and device" },
	{ RULE("  deviceSelector:\n    selectors: [{cel: {expression: 'true'}}]\n" RULE_TAINT),
	  RP "spec.deviceSelector.selectors: Forbidden: removed in Kubernetes 1.35: a "
	  "DeviceTaintRule selects by driver, pool and device" },
	{ RULE("  taint: {key: k, effect: PreferNoSchedule}\n"),
	  RP "spec.taint.effect: Unsupported value: \"PreferNoSchedule\": supported values: "
	  "\"NoExecute\", \"NoSchedule\", \"None\"" },
	{ RULE("  deviceSelector: {}\n"), RP "spec.taint.effect: Required value" },
	{ RULE("  taint: {key: 'a b', effect: None}\n"),
	  RP "spec.taint.key: Invalid value: \"a b\": name part must consist of alphanumeric "
	  "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
	  "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
	  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')" },
	{ RULE("  taint: {key: k, value: '-x', effect: None}\n"),
	  RP "spec.taint.value: Invalid value: \"-x\": a valid label must be an empty string or "
	  "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
	  "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
	  "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')" },
	{ COND("{type: T, status: Maybe, reason: R, " COND_TIME "}"),
	  RP "status.conditions[0].status: Unsupported value: \"Maybe\": supported values: "
	  "\"False\", \"True\", \"Unknown\"" },
	{ COND("{" COND_OK ", observedGeneration: -1}"),
	  RP "status.conditions[0].observedGeneration: Invalid value: -1: must be greater than "
	  "or equal to zero" },
	{ COND("{type: T, status: 'True', reason: R}"),
	  RP "status.conditions[0].lastTransitionTime: Required value: must be set" },
	{ COND("{type: T, status: 'True', lastTransitionTime: '2026-01-02T03:04:05Z'}"),
	  RP "status.conditions[0].reason: Required value: must be set" },
	{ COND("{type: T, status: 'True', reason: 'Idle,', " COND_TIME "}"),
	  RP "status.conditions[0].reason: Invalid value: \"Idle,\": a condition reason must "
	  "start with alphabetic character, optionally followed by a string of alphanumeric "
	  "characters or '_,:', and must end with an alphanumeric character or '_' (e.g. "
	  "'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or "
	  "'ReasonA:ReasonB', regex used for validation is "
	  "'[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')" },
	{ COND("{" COND_OK "}\n  - {" COND_OK "}"),
	  RP "status.conditions[1].type: Duplicate value: \"EvictionInProgress\"" },
	{ COND("{type: '', status: 'True', reason: R, " COND_TIME "}"),
	  RP "status.conditions[0].type: Invalid value: \"\": name part must be non-empty" },

	/* metadata */
	{ "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {}\nspec: {}\n",
	  "t.yaml: document 1 (ResourceClaim default/): metadata.name: Required value: "
	  "name or generateName is required" },
	/* generateName: the prefix checked with its trailing dash masked, and
	 * the name made from it (Bad_ + five characters) checked as a name. */
	{ "apiVersion: v1\nkind: Pod\nmetadata: {generateName: Bad_}\n"
	  "spec: {containers: [{name: c, image: i}]}\n",
	  "t.yaml: document 1 (Pod default/Bad_gvpcq): metadata.generateName: Invalid value: "
	  "\"Bad_\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
	  "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
	  "'example.com', regex used for validation is "
	  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')" },
	{ "apiVersion: v1\nkind: Pod\nmetadata: {generateName: Bad_}\n"
	  "spec: {containers: [{name: c, image: i}]}\n",
	  "t.yaml: document 1 (Pod default/Bad_gvpcq): metadata.name: Invalid value: "
	  "\"Bad_gvpcq\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
	  "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
	  "'example.com', regex used for validation is "
	  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')" },
	{ "apiVersion: v1\nkind: Pod\nmetadata: {generateName: ok-}\n"
	  "spec: {containers: [{name: c, image: i}]}\n", NULL },
	{ "apiVersion: v1\nkind: Pod\nmetadata: {generateName: ok.example-}\n"
	  "spec: {containers: [{name: c, image: i}]}\n", NULL },
	{ "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: Bad}\nspec: {}\n",
	  "t.yaml: document 1 (ResourceClaim default/Bad): metadata.name: Invalid value: \"Bad\": "
	  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
	  "'-' or '.', and must start and end with an alphanumeric character (e.g. "
	  "'example.com', regex used for validation is "
	  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')" },
	{ "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: A_B, labels: {'a/b/c': x}}\n"
	  "spec: {containers: [{name: c, image: i}]}\n",
	  "t.yaml: document 1 (Pod A_B/p): metadata.namespace: Invalid value: \"A_B\": a lowercase "
	  "RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
	  "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
	  "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')" },
	{ "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {a: '-x'}}\n"
	  "spec: {containers: [{name: c, image: i}]}\n",
	  PP "metadata.labels: Invalid value: \"-x\": a valid label must be an empty string or "
	  "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
	  "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
	  "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')" },

	/* claims: requests */
	{ CLAIM("    requests:\n    - name: gpu\n      exactly: {deviceClassName: x, count: -1}\n"),
	  CP "spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero" },
	{ CLAIM("    requests:\n    - name: gpu\n      exactly: {deviceClassName: x, "
		"allocationMode: All, count: 2}\n"),
	  CP "spec.devices.requests[0].exactly.count: Invalid value: 2: must not be specified "
	  "when allocationMode is 'All'" },
	{ CLAIM("    requests:\n    - name: gpu\n      exactly: {deviceClassName: x, "
		"allocationMode: Some}\n"),
	  CP "spec.devices.requests[0].exactly.allocationMode: Unsupported value: \"Some\": "
	  "supported values: \"All\", \"ExactCount\"" },
	{ CLAIM("    requests:\n    - name: gpu\n      exactly: {count: 1}\n"),
	  CP "spec.devices.requests[0].exactly.deviceClassName: Required value" },
	{ CLAIM("    requests:\n    - name: gpu\n"),
	  CP "spec.devices.requests[0]: Required value: exactly one of `exactly` or "
	  "`firstAvailable` is required" },
	{ CLAIM("    requests:\n    - name: gpu\n      exactly: {deviceClassName: x}\n"
		"      firstAvailable: [{name: a, deviceClassName: x}]\n"),
	  CP "spec.devices.requests[0]: Invalid value: null: exactly one of `exactly` or "
	  "`firstAvailable` is required, but multiple fields are set" },
	{ CLAIM("    requests:\n    - name: gpu\n      exactly: {deviceClassName: x}\n"
		"    - name: gpu\n      exactly: {deviceClassName: x}\n"),
	  CP "spec.devices.requests[1]: Duplicate value: \"gpu\"" },
	{ CLAIM("    requests:\n    - name: Gpu\n      exactly: {deviceClassName: x}\n"),
	  CP "spec.devices.requests[0].name: Invalid value: \"Gpu\": a lowercase RFC 1123 label "
	  "must consist of lower case alphanumeric characters or '-', and must start and end "
	  "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
	  "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')" },
	{ CLAIM("    requests:\n    - name: gpu\n      firstAvailable:\n"
		"      - {name: a, deviceClassName: x, adminAccess: true}\n"),
	  CP "spec.devices.requests[0].firstAvailable[0].adminAccess: Forbidden: only allowed "
	  "in `exactly` requests, not in subrequests" },
	{ CLAIM("    requests:\n    - name: gpu\n      firstAvailable:\n"
		"      - {name: a, deviceClassName: x}\n      - {name: a, deviceClassName: x}\n"),
	  CP "spec.devices.requests[0].firstAvailable[1]: Duplicate value: \"a\"" },
	{ CLAIM("    requests:\n    - name: gpu\n      exactly:\n        deviceClassName: x\n"
		"        tolerations: [{key: k, operator: Exists, value: v}]\n"),
	  CP "spec.devices.requests[0].exactly.tolerations[0].value: Invalid value: \"v\": must "
	  "be empty for operator `Exists`" },
	{ CLAIM("    requests:\n    - name: gpu\n      exactly:\n        deviceClassName: x\n"
		"        tolerations: [{key: k, operator: Maybe}]\n"),
	  CP "spec.devices.requests[0].exactly.tolerations[0].operator: Unsupported value: "
	  "\"Maybe\": supported values: \"Equal\", \"Exists\"" },
	{ CLAIM("    requests:\n    - name: gpu\n      exactly:\n        deviceClassName: x\n"
		"        tolerations: [{key: k, effect: Sometimes}]\n"),
	  CP "spec.devices.requests[0].exactly.tolerations[0].effect: Unsupported value: "
	  "\"Sometimes\": supported values: \"NoExecute\", \"NoSchedule\", \"None\"" },
	{ CLAIM("    requests:\n    - name: gpu\n      exactly:\n        deviceClassName: x\n"
		"        selectors: [{}]\n"),
	  CP "spec.devices.requests[0].exactly.selectors[0].cel: Required value" },

	/* claims: constraints and config */
	{ CLAIM(REQ1 "    constraints:\n    - {requests: [gpu, nic], matchAttribute: a.b/c}\n"),
	  CP "spec.devices.constraints[0].requests[1]: Invalid value: \"nic\": must be the name "
	  "of a request in the claim or the name of a request and a subrequest separated by '/'" },
	{ CLAIM(REQ1 "    constraints:\n    - {requests: [gpu, gpu], matchAttribute: a.b/c}\n"),
	  CP "spec.devices.constraints[0].requests[1]: Duplicate value: \"gpu\"" },
	{ CLAIM(REQ1 "    constraints:\n    - {matchAttribute: pcieRoot}\n"),
	  CP "spec.devices.constraints[0].matchAttribute: Invalid value: \"pcieRoot\": a fully "
	  "qualified name must be a domain and a name separated by a slash" },
	{ CLAIM(REQ1 "    constraints:\n    - {distinctAttribute: a.b/}\n"),
	  CP "spec.devices.constraints[0].distinctAttribute: Invalid value: \"\": the name must "
	  "not be empty" },
	{ CLAIM(REQ1 "    constraints:\n    - {requests: [gpu]}\n"),
	  CP "spec.devices.constraints[0]: Required value: exactly one of \"matchAttribute\" or "
	  "\"distinctAttribute\" is required" },
	{ CLAIM(REQ1 "    config:\n    - requests: [gpu]\n"),
	  CP "spec.devices.config[0].opaque: Required value" },
	{ CLAIM(REQ1 "    config:\n    - opaque: {driver: gpu.example.com, parameters: [1]}\n"),
	  CP "spec.devices.config[0].opaque.parameters: Invalid value: \"<value omitted>\": must "
	  "be a valid JSON object" },
	{ CLAIM(REQ1 "    config:\n    - opaque: {driver: '', parameters: {a: 1}}\n"),
	  CP "spec.devices.config[0].opaque.driver: Required value" },

	/* claims: status */
	{ CLAIM(REQ1) "status:\n  reservedFor: [{resource: pods, name: p, uid: u}]\n",
	  CP "status.reservedFor: Forbidden: may not be specified when `allocated` is not set" },
	{ CLAIM(REQ1) "status:\n  allocation:\n    devices:\n      results:\n"
	  "      - {request: gpu, driver: gpu.example.com, pool: p, device: gpu-0, shareID: X}\n",
	  CP "status.allocation.devices.results[0].shareID: Invalid value: \"X\": uid must be in "
	  "RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase "
	  "hexadecimal characters" },
	{ CLAIM(REQ1) "status:\n  allocation:\n    devices:\n      results:\n"
	  "      - {request: other, driver: gpu.example.com, pool: p, device: gpu-0}\n",
	  CP "status.allocation.devices.results[0].request: Invalid value: \"other\": must be the "
	  "name of a request in the claim or the name of a request and a subrequest separated by '/'" },
	{ CLAIM(REQ1) "status:\n  allocation:\n    devices:\n      config:\n"
	  "      - {source: FromNowhere, opaque: {driver: d.io, parameters: {}}}\n",
	  CP "status.allocation.devices.config[0].source: Unsupported value: \"FromNowhere\": "
	  "supported values: \"FromClaim\", \"FromClass\"" },

	/* slices */
	{ SLICE("  nodeName: n1\n  allNodes: true\n"),
	  SP "spec: Invalid value: \"{`nodeName`, `allNodes`}\": exactly one of `nodeName`, "
	  "`nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields "
	  "are set" },
	{ SLICE(""),
	  SP "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
	  "`perDeviceNodeSelection` is required" },
	{ SLICE("  allNodes: false\n"),
	  SP "spec.allNodes: Invalid value: false: must be either unset or set to true" },
	{ SLICE("  nodeName: ''\n  allNodes: true\n"),
	  SP "spec.nodeName: Invalid value: \"\": must be either unset or set to a non-empty string" },
	{ SLICE("  nodeSelector: {nodeSelectorTerms: []}\n"),
	  SP "spec.nodeSelector.nodeSelectorTerms: Required value: must have at least one node "
	  "selector term" },
	{ SLICE("  nodeSelector:\n    nodeSelectorTerms:\n    - matchExpressions: [{key: a, "
		"operator: In}]\n"),
	  SP "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values: Required value: "
	  "must be specified when `operator` is 'In' or 'NotIn'" },
	{ SLICE("  nodeSelector:\n    nodeSelectorTerms:\n    - matchExpressions: [{key: a, "
		"operator: Near, values: [x]}]\n"),
	  SP "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "
	  "\"Near\": not a valid selector operator" },
	{ SLICE("  nodeSelector:\n    nodeSelectorTerms:\n    - matchFields: [{key: a, "
		"operator: In, values: [x]}]\n"),
	  SP "spec.nodeSelector.nodeSelectorTerms[0].matchFields[0].key: Invalid value: \"a\": "
	  "not a valid field selector key" },
	{ SLICE("  nodeSelector:\n    nodeSelectorTerms:\n    - matchExpressions: [{key: a, "
		"operator: Exists}]\n    - matchExpressions: [{key: b, operator: Exists}]\n"),
	  SP "spec.nodeSelector.nodeSelectorTerms: Invalid value: [...]: must have exactly one "
	  "node selector term" },
	{ "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
	  "  driver: gpu.example.com\n  pool: {name: p, generation: -1, resourceSliceCount: 0}\n"
	  "  allNodes: true\n",
	  SP "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero" },
	{ "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
	  "  driver: gpu.example.com\n  pool: {name: p, generation: -1, resourceSliceCount: 1}\n"
	  "  allNodes: true\n",
	  SP "spec.pool.generation: Invalid value: -1: must be greater than or equal to zero" },
	{ "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
	  "  driver: gpu.example.com\n  pool: {resourceSliceCount: 1}\n  allNodes: true\n",
	  SP "spec.pool.name: Required value" },
	{ "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
	  "  driver: a234567890123456789012345678901234567890123456789012345678901234.com\n"
	  "  pool: {name: p, resourceSliceCount: 1}\n  allNodes: true\n",
	  SP "spec.driver: Too long: may not be more than 63 bytes" },
	{ DEVICE("  - name: gpu-0\n"), SP "spec.devices[1]: Duplicate value: \"gpu-0\"" },
	{ DEVICE("    attributes: {v: {version: 1.02.3}}\n"),
	  SP "spec.devices[0].attributes[v].version: Invalid value: \"1.02.3\": must be a string "
	  "compatible with semver.org spec 2.0.0" },
	{ DEVICE("    attributes: {s: {string: "
		 "'12345678901234567890123456789012345678901234567890123456789012345'}}\n"),
	  SP "spec.devices[0].attributes[s].string: Too long: may not be more than 64 bytes" },
	/* list-type attributes (DRAListTypeAttributes) */
	{ DEVICE("    attributes: {a: {ints: [1, 2]}, b: {bools: [true]}, c: {strings: [x, z]}, "
		 "d: {versions: [1.2.3, 2.0.0-rc.1]}}\n"), NULL },
	{ DEVICE("    attributes: {a: {ints: []}}\n"),
	  SP "spec.devices[0].attributes[a].ints: Required value: must not be empty" },
	{ DEVICE("    attributes: {a: {strings: [ok, "
		 "'12345678901234567890123456789012345678901234567890123456789012345']}}\n"),
	  SP "spec.devices[0].attributes[a].strings[1]: Too long: may not be more than 64 bytes" },
	{ DEVICE("    attributes: {v: {versions: [1.2.3, 1.02.3]}}\n"),
	  SP "spec.devices[0].attributes[v].versions[1]: Invalid value: \"1.02.3\": must be a "
	  "string compatible with semver.org spec 2.0.0" },
	{ DEVICE("    attributes: {a: {ints: [1], int: 1}}\n"),
	  SP "spec.devices[0].attributes[a]: Invalid value: {...}: exactly one "
	  "value must be specified" },
	{ DEVICE("    attributes: {a: {ints: [1, x]}}\n"),
	  SP "spec.devices[0].attributes[a].ints[1]: Invalid value: \"x\": must be an integer" },
	{ DEVICE("    attributes: {a: {bools: yes}}\n"),
	  SP "spec.devices[0].attributes[a].bools: Invalid value: yes: must be a list" },
	{ DEVICE("    attributes: {1abc: {int: 1}}\n"),
	  SP "spec.devices[0].attributes[1abc]: Invalid value: \"1abc\": a valid C identifier "
	  "must start with alphabetic character or '_', followed by a string of alphanumeric "
	  "characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for "
	  "validation is '[A-Za-z_][A-Za-z0-9_]*')" },
	{ DEVICE("    attributes: {/x: {int: 1}}\n"),
	  SP "spec.devices[0].attributes[/x]: Invalid value: \"\": the domain must not be empty" },
	{ DEVICE("    attributes: {a123456789012345678901234567890123: {int: 1}}\n"),
	  SP "spec.devices[0].attributes[a123456789012345678901234567890123]: Too long: may not "
	  "be more than 32 bytes" },
	{ DEVICE("    attributes: {a123456789b123456789c123456789d123456789e123456789f123456789"
		 "g123456789h123456789i123456789j123456789: {int: 1}}\n"),
	  /* 100 bytes cut to 96 in the path: 47 + "..." + 46 */
	  SP "spec.devices[0].attributes[a123456789b123456789c123456789d123456789e123456..."
	  "456789g123456789h123456789i123456789j123456789]: Too long: may not be more than 32 "
	  "bytes" },
	{ DEVICE("    capacity: {memory: {value: 80Gi, requestPolicy: {default: 1Gi}}}\n"),
	  SP "spec.devices[0].capacity[memory].requestPolicy: Forbidden: allowMultipleAllocations "
	  "must be true" },
	{ DEVICE("    allowMultipleAllocations: true\n    capacity: {memory: {value: 80Gi, "
		 "requestPolicy: {validValues: [1Gi]}}}\n"),
	  SP "spec.devices[0].capacity[memory].requestPolicy.default: Required value: required "
	  "when validValues is defined" },
	{ DEVICE("    allowMultipleAllocations: true\n    capacity: {memory: {value: 80Gi, "
		 "requestPolicy: {default: 2Gi, validValues: [1Gi, 4Gi]}}}\n"),
	  SP "spec.devices[0].capacity[memory].requestPolicy.validValues: Invalid value: \"2Gi\": "
	  "default value is not valid according to the requestPolicy" },
	{ DEVICE("    allowMultipleAllocations: true\n    capacity: {memory: {value: 80Gi, "
		 "requestPolicy: {default: 4Gi, validValues: [4Gi, 1Gi]}}}\n"),
	  SP "spec.devices[0].capacity[memory].requestPolicy.validValues[1]: Invalid value: "
	  "\"1Gi\": values must be sorted in ascending order" },
	{ DEVICE("    allowMultipleAllocations: true\n    capacity: {memory: {value: 80Gi, "
		 "requestPolicy: {default: 1Gi, validValues: [1Gi, 90Gi]}}}\n"),
	  SP "spec.devices[0].capacity[memory].requestPolicy.validValues[1]: Invalid value: "
	  "\"90Gi\": option is larger than capacity value: 80Gi" },
	{ DEVICE("    allowMultipleAllocations: true\n    capacity: {memory: {value: 80Gi, "
		 "requestPolicy: {default: 1, validValues: [1,2,3,4,5,6,7,8,9,10,11]}}}\n"),
	  SP "spec.devices[0].capacity[memory].requestPolicy.validValues: Too many: 11: must have "
	  "at most 10 items" },
	{ DEVICE("    allowMultipleAllocations: true\n    capacity: {memory: {value: 80Gi, "
		 "requestPolicy: {default: 1Gi, validValues: [1Gi], validRange: {min: 1Gi}}}}\n"),
	  SP "spec.devices[0].capacity[memory].requestPolicy: Forbidden: exactly one policy can "
	  "be specified, cannot specify \"validValues\" and \"validRange\" at the same time" },
	{ DEVICE("    allowMultipleAllocations: true\n    capacity: {memory: {value: 80Gi, "
		 "requestPolicy: {default: 1Gi, validRange: {max: 2Gi}}}}\n"),
	  SP "spec.devices[0].capacity[memory].requestPolicy.validRange.min: Required value: "
	  "required when validRange is defined" },
	{ DEVICE("    allowMultipleAllocations: true\n    capacity: {memory: {value: 80Gi, "
		 "requestPolicy: {default: 1Gi, validRange: {min: 2Gi}}}}\n"),
	  SP "spec.devices[0].capacity[memory].requestPolicy.validRange.min: Invalid value: "
	  "\"1Gi\": default is less than min: 2Gi" },
	{ DEVICE("    allowMultipleAllocations: true\n    capacity: {memory: {value: 80Gi, "
		 "requestPolicy: {default: 1Gi, validRange: {min: 90Gi}}}}\n"),
	  SP "spec.devices[0].capacity[memory].requestPolicy.validRange.min: Invalid value: "
	  "\"90Gi\": min is larger than capacity value: 80Gi" },
	{ DEVICE("    allowMultipleAllocations: true\n    capacity: {memory: {value: 80Gi, "
		 "requestPolicy: {default: 4Gi, validRange: {min: 1Gi, max: 2Gi}}}}\n"),
	  SP "spec.devices[0].capacity[memory].requestPolicy.validRange.max: Invalid value: "
	  "\"4Gi\": default is more than max: 2Gi" },
	{ DEVICE("    allowMultipleAllocations: true\n    capacity: {memory: {value: 80Gi, "
		 "requestPolicy: {default: 1Gi, validRange: {min: 1Gi, max: 90Gi}}}}\n"),
	  SP "spec.devices[0].capacity[memory].requestPolicy.validRange.max: Invalid value: "
	  "\"90Gi\": max is larger than capacity value: 80Gi" },
	{ DEVICE("    allowMultipleAllocations: true\n    capacity: {memory: {value: 80Gi, "
		 "requestPolicy: {default: 2Gi, validRange: {min: 1Gi, step: 3Gi}}}}\n"),
	  SP "spec.devices[0].capacity[memory].requestPolicy.validRange.step: Invalid value: "
	  "\"2Gi\": value is not a multiple of a given step (3Gi) from (1Gi)" },
	{ DEVICE("    allowMultipleAllocations: true\n    capacity: {memory: {value: 80Gi, "
		 "requestPolicy: {default: 1Gi, validRange: {min: 1Gi, step: 80Gi}}}}\n"),
	  SP "spec.devices[0].capacity[memory].requestPolicy.validRange.step: Invalid value: "
	  "\"80Gi\": one step 81Gi is larger than capacity value: 80Gi" },
	{ DEVICE("    taints: [{key: k, effect: Sometimes}]\n"),
	  SP "spec.devices[0].taints[0].effect: Unsupported value: \"Sometimes\": supported "
	  "values: \"NoExecute\", \"NoSchedule\", \"None\"" },
	{ DEVICE("    taints: [{key: k}]\n"),
	  SP "spec.devices[0].taints[0].effect: Required value" },
	{ DEVICE("    bindingConditions: [a]\n"),
	  SP "spec.devices[0].bindingFailureConditions: Invalid value: []string(nil): "
	  "bindingFailureConditions are required to use bindingConditions" },
	{ DEVICE("    bindingConditions: [a]\n    bindingFailureConditions: [a]\n"),
	  SP "spec.devices[0].bindingFailureConditions[0]: Invalid value: \"a\": "
	  "bindingFailureConditions must not overlap with bindingConditions" },
	{ DEVICE("    bindingConditions: [a, b, c, d, e]\n    bindingFailureConditions: [f]\n"),
	  SP "spec.devices[0].bindingConditions: Too many: 5: must have at most 4 items" },
	{ DEVICE("    nodeName: n2\n"),
	  SP "spec.devices[0]: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can "
	  "only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec" },
	{ SLICE("  perDeviceNodeSelection: true\n  devices:\n  - name: gpu-0\n"),
	  SP "spec.devices[0]: Required value: exactly one of `nodeName`, `nodeSelector`, or "
	  "`allNodes` is required when `perDeviceNodeSelection` is set to true in the "
	  "ResourceSlice spec" },
	{ DEVICE("    consumesCounters:\n    - counterSet: cs\n"),
	  SP "spec.devices[0].consumesCounters[0].counters: Required value" },
	{ DEVICE("    consumesCounters:\n    - {counterSet: a, counters: {m: {value: 1}}}\n"
		 "    - {counterSet: b, counters: {m: {value: 1}}}\n"
		 "    - {counterSet: c, counters: {m: {value: 1}}}\n"),
	  SP "spec.devices[0].consumesCounters: Too many: 3: must have at most 2 items" },
	{ SLICE("  allNodes: true\n  sharedCounters:\n  - {name: Bad, counters: {m: {value: 1}}}\n"),
	  SP "spec.sharedCounters[0].name: Invalid value: \"Bad\": a lowercase RFC 1123 label must "
	  "consist of lower case alphanumeric characters or '-', and must start and end with an "
	  "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
	  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')" },
	{ SLICE("  allNodes: true\n  sharedCounters:\n  - {name: a, counters: {m: {value: 1}}}\n"
		"  - {name: a, counters: {m: {value: 1}}}\n"),
	  SP "spec.sharedCounters[1]: Duplicate value: \"a\"" },
	{ SLICE("  allNodes: true\n  sharedCounters:\n  - {name: a, counters: {m: {value: 1}}}\n"
		"  devices: [{name: d}]\n"),
	  SP "spec: Invalid value: \"\": only one of `sharedCounters` or `devices` is allowed" },

	/* device classes */
	{ CLASS("  selectors:\n  - {}\n"), KP "spec.selectors[0].cel: Required value" },
	{ CLASS("  extendedResourceName: gpu\n"),
	  KP "spec.extendedResourceName: Invalid value: \"gpu\": must be a valid extended "
	  "resource name" },
	{ CLASS("  config:\n  - opaque: {driver: d.io}\n"),
	  KP "spec.config[0].opaque.parameters: Required value" },

	/* pods */
	{ POD("  containers: []\n"), PP "spec.containers: Required value" },
	{ POD("  containers: [{name: c}]\n"), PP "spec.containers[0].image: Required value" },
	{ POD("  containers: [{name: c, image: i, resources: {claims: [{name: gpu}]}}]\n"),
	  PP "spec.containers[0].resources.claims[0]: Not found: \"gpu\": must be one of the names "
	  "in pod.spec.resourceClaims" },
	{ POD("  resourceClaims: [{name: gpu, resourceClaimName: g}]\n"
	      "  containers: [{name: c, image: i, resources: {claims: [{name: gpu}, {name: gpu}]}}]\n"),
	  PP "spec.containers[0].resources.claims[1]: Duplicate value: \"gpu\"" },
	{ POD("  resourceClaims: [{name: gpu, resourceClaimName: g}]\n"
	      "  containers: [{name: c, image: i, resources: {claims: [{name: gpu, request: a}, "
	      "{name: gpu, request: b}]}}]\n"), NULL },
	{ POD("  resourceClaims: [{name: gpu}]\n  containers: [{name: c, image: i}]\n"),
	  PP "spec.resourceClaims[0]: Required value: must specify one of: `resourceClaimName`, "
	  "`resourceClaimTemplateName`" },
	{ POD("  resourceClaims: [{name: gpu, resourceClaimName: a, resourceClaimTemplateName: b}]\n"
	      "  containers: [{name: c, image: i}]\n"),
	  PP "spec.resourceClaims[0]: Invalid value: {...}: at most one of `resourceClaimName` or "
	  "`resourceClaimTemplateName` may be specified" },
	{ POD("  resourceClaims: [{name: g, resourceClaimName: a}, {name: g, resourceClaimName: b}]\n"
	      "  containers: [{name: c, image: i}]\n"),
	  PP "spec.resourceClaims[1]: Duplicate value: \"g\"" },
	{ POD("  tolerations: [{operator: Equal, value: x}]\n  containers: [{name: c, image: i}]\n"),
	  PP "spec.tolerations[0].operator: Invalid value: \"Equal\": operator must be Exists when "
	  "`key` is empty, which means \"match all values and all keys\"" },
	{ POD("  tolerations: [{key: k, operator: Exists, value: x}]\n"
	      "  containers: [{name: c, image: i}]\n"),
	  PP "spec.tolerations[0].operator: Invalid value: \"Exists\": value must be empty when "
	  "`operator` is 'Exists'" },
	{ POD("  tolerations: [{key: k, effect: NoSchedule, tolerationSeconds: 5}]\n"
	      "  containers: [{name: c, image: i}]\n"),
	  PP "spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' "
	  "when `tolerationSeconds` is set" },
	{ POD("  containers:\n  - name: c\n    image: i\n    resources:\n"
	      "      requests: {nvidia.com/gpu: 1}\n      limits: {nvidia.com/gpu: 2}\n"),
	  PP "spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: \"1\": must be "
	  "equal to nvidia.com/gpu limit of 2" },
	/* QA-89: an extended resource requested without a limit, and
	 * hugepages below their limit, as the API server refuses them */
	{ POD("  containers:\n  - name: c\n    image: i\n    resources:\n"
	      "      requests: {example.com/l4: 1, cpu: 1}\n"),
	  PP "spec.containers[0].resources.limits: Required value: Limit must be set for non "
	  "overcommitable resources" },
	{ POD("  containers:\n  - name: c\n    image: i\n    resources:\n"
	      "      requests: {hugepages-2Mi: 2Mi, memory: 1Gi}\n"
	      "      limits: {hugepages-2Mi: 4Mi, memory: 1Gi}\n"),
	  PP "spec.containers[0].resources.requests[hugepages-2Mi]: Invalid value: \"2Mi\": must be "
	  "equal to hugepages-2Mi limit of 4Mi" },
	{ POD("  containers:\n  - name: c\n    image: i\n    resources:\n"
	      "      requests: {example.com/l4: 1, kubernetes.io/x: 1, memory: 1Gi}\n"
	      "      limits: {example.com/l4: 1}\n"), NULL },
	{ POD("  containers:\n  - name: c\n    image: i\n    resources:\n"
	      "      requests: {cpu: 2}\n      limits: {cpu: 1}\n"),
	  PP "spec.containers[0].resources.requests[cpu]: Invalid value: \"2\": must be less than "
	  "or equal to cpu limit of 1" },
	{ POD("  containers:\n  - name: c\n    image: i\n    resources:\n"
	      "      limits: {nvidia.com/gpu: 500m}\n"),
	  PP "spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: \"500m\": must be "
	  "an integer" },

	/* workloads, nodes, karpenter */
	{ "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: -1\n"
	  "  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n"
	  "    spec: {containers: [{name: c, image: i}]}\n",
	  "t.yaml: document 1 (Deployment default/d): spec.replicas: Invalid value: -1: must be "
	  "greater than or equal to 0" },
	{ "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n"
	  "  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: c}}\n"
	  "    spec: {containers: [{name: c, image: i}]}\n",
	  "t.yaml: document 1 (Deployment default/d): spec.template.metadata.labels: Invalid value: "
	  "map[string]string{...}: `selector` does not match template `labels`" },
	{ "apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\nspec:\n  taints: [{key: k, effect: X}]\n",
	  "t.yaml: document 1 (Node node-1): spec.taints[0].effect: Unsupported value: \"X\": supported "
	  "values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"" },
	{ "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: np}\nspec:\n  template:\n"
	  "    spec:\n      requirements: [{key: a, operator: Near}]\n",
	  "t.yaml: document 1 (NodePool np): spec.template.spec.nodeClassRef: Required value" },
	{ "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: np}\nspec:\n  template:\n"
	  "    spec:\n      nodeClassRef: {group: g, kind: k, name: n}\n"
	  "      requirements: [{key: a, operator: Near}]\n",
	  "t.yaml: document 1 (NodePool np): spec.template.spec.requirements[0].operator: "
	  "Unsupported value: \"Near\": supported values: \"In\", \"NotIn\", \"Exists\", "
	  "\"DoesNotExist\", \"Gt\", \"Lt\"" },
	{ "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: np}\nspec:\n  weight: 0\n"
	  "  template:\n    spec:\n      nodeClassRef: {group: g, kind: k, name: n}\n",
	  "t.yaml: document 1 (NodePool np): spec.weight: Invalid value: 0: should be greater than "
	  "or equal to 1" },

	/* more claim status rules */
	{ CLAIM(REQ1) "status:\n  allocation: {devices: {results: [{request: gpu}]}}\n"
	  "  reservedFor: [{resource: pods, name: a, uid: u1}, {resource: pods, name: b, uid: u1},"
	  " {name: c}]\n",
	  CP "status.reservedFor[1]: Duplicate value: \"u1\"" },
	{ CLAIM(REQ1) "status:\n  allocation: {devices: {results: [{request: gpu}]}}\n"
	  "  reservedFor: [{name: c}]\n",
	  CP "status.reservedFor[0].resource: Required value" },
	{ CLAIM(REQ1) "status:\n  allocation: {devices: {results: [{request: gpu}]}}\n",
	  CP "status.allocation.devices.results[0].driver: Required value" },
	{ CLAIM(REQ1) "status:\n  allocation: {devices: {results: [{request: gpu}]}}\n",
	  CP "status.allocation.devices.results[0].pool: Required value" },
	{ CLAIM(REQ1) "status:\n  allocation:\n    devices:\n      results:\n"
	  "      - {request: gpu, driver: d.io, pool: 'a//b', device: gpu_0}\n",
	  CP "status.allocation.devices.results[0].device: Invalid value: \"gpu_0\": a lowercase "
	  "RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
	  "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
	  "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')" },
	{ CLAIM(REQ1) "status:\n  allocation:\n    devices:\n      results:\n"
	  "      - {request: gpu, driver: d.io, pool: 'a//b', device: gpu-0}\n",
	  CP "status.allocation.devices.results[0].pool: Invalid value: \"\": a lowercase RFC "
	  "1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
	  "must start and end with an alphanumeric character (e.g. 'example.com', regex used "
	  "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')" },
	{ CLAIM("    requests:\n    - name: gpu\n      firstAvailable:\n"
		"      - {name: fast, deviceClassName: x}\n"
		"    constraints:\n    - {requests: [gpu/slow], matchAttribute: a.io/b}\n"),
	  CP "spec.devices.constraints[0].requests[0]: Invalid value: \"gpu/slow\": must be the "
	  "name of a request in the claim or the name of a request and a subrequest separated by '/'" },
	{ CLAIM("    requests:\n    - name: gpu\n      firstAvailable:\n"
		"      - {name: fast, deviceClassName: x}\n"
		"    constraints:\n    - {requests: [gpu/fast, gpu], matchAttribute: a.io/b}\n"), NULL },
	{ CLAIM(REQ1 "    constraints:\n    - {requests: [a/b/c], matchAttribute: a.io/b}\n"),
	  CP "spec.devices.constraints[0].requests[0]: Invalid value: \"a/b/c\": must be the name "
	  "of a request in the claim or the name of a request and a subrequest separated by '/'" },
	{ CLAIM(REQ1 "    constraints:\n    - {matchAttribute: a.io/b, distinctAttribute: a.io/c}\n"),
	  CP "spec.devices.constraints[0]: Invalid value: null: exactly one of \"matchAttribute\" "
	  "or \"distinctAttribute\" is required, but multiple fields are set" },
	{ CLAIM("    requests:\n    - name: gpu\n      exactly:\n        deviceClassName: x\n"
		"        capacity: {requests: {'1mem': 1Gi}}\n"),
	  CP "spec.devices.requests[0].exactly.capacity.requests[1mem]: Invalid value: \"1mem\": "
	  "a valid C identifier must start with alphabetic character or '_', followed by a "
	  "string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or "
	  "'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')" },

	/* metadata on cluster-scoped kinds */
	{ "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: k, namespace: x}\n"
	  "spec: {}\n",
	  KP "metadata.namespace: Forbidden: not allowed on this type" },

	/* more pod and workload rules */
	{ POD("  nodeName: Node_1\n  containers: [{name: c, image: i}]\n"),
	  PP "spec.nodeName: Invalid value: \"Node_1\": a lowercase RFC 1123 subdomain must "
	  "consist of lower case alphanumeric characters, '-' or '.', and must start and end "
	  "with an alphanumeric character (e.g. 'example.com', regex used for validation is "
	  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')" },
	{ POD("  containers:\n  - {name: c, image: i, resources: {requests: {memory: -1Gi}}}\n"),
	  PP "spec.containers[0].resources.requests[memory]: Invalid value: \"-1Gi\": must be "
	  "greater than or equal to 0" },
	{ POD("  containers: [{name: c, image: i}]\n  tolerations: [{key: k, operator: Maybe}]\n"),
	  PP "spec.tolerations[0].operator: Unsupported value: \"Maybe\": supported values: "
	  "\"Equal\", \"Exists\"" },
	{ POD("  containers: [{name: c, image: i}]\n  tolerations: [{key: k, effect: Soon}]\n"),
	  PP "spec.tolerations[0].effect: Unsupported value: \"Soon\": supported values: "
	  "\"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"" },
	{ POD("  containers: [{name: c, image: i}]\n  affinity:\n    nodeAffinity:\n"
	      "      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n"
	      "        - matchExpressions: [{key: a, operator: Gt, values: ['1', '2']}]\n"),
	  PP "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
	  "nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified "
	  "single value when `operator` is 'Lt' or 'Gt'" },
	{ POD("  containers: [{name: c, image: i}]\n  affinity:\n    nodeAffinity:\n"
	      "      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n"
	      "        - matchExpressions: [{key: a, operator: Exists, values: [x]}]\n"),
	  PP "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
	  "nodeSelectorTerms[0].matchExpressions[0].values: Forbidden: may not be specified when "
	  "`operator` is 'Exists' or 'DoesNotExist'" },
	{ "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  parallelism: -2\n"
	  "  template: {spec: {restartPolicy: Never, containers: [{name: c, image: i}]}}\n",
	  "t.yaml: document 1 (Job default/j): spec.parallelism: Invalid value: -2: must be greater "
	  "than or equal to 0" },
	{ "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec:\n"
	  "  template: {spec: {containers: [{name: c, image: i}]}}\n",
	  "t.yaml: document 1 (StatefulSet default/s): spec.selector: Required value" },
	{ "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\nspec:\n  selector: {}\n"
	  "  template: {spec: {containers: [{name: c, image: i}]}}\n",
	  "t.yaml: document 1 (DaemonSet default/d): spec.selector: Invalid value: \"\": empty "
	  "selector is invalid for daemonset" },
	{ "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec:\n  selector: {}\n"
	  "  template: {spec: {containers: [{name: c, image: i}]}}\n",
	  "t.yaml: document 1 (StatefulSet default/s): spec.selector: Invalid value: \"\": empty "
	  "selector is invalid for statefulset" },
	{ "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\nspec:\n"
	  "  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n"
	  "    spec: {containers: [{name: c, image: i}]}\n", NULL },
	/* restartPolicy (QA-16): the pod's three values; a Job's pods OnFailure or
	 * Never (the default Always counts as missing), apps/v1's Always */
	{ POD("  restartPolicy: Sometimes\n  containers: [{name: c, image: i}]\n"),
	  PP "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", "
	  "\"OnFailure\", \"Never\"" },
	{ "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n"
	  "  template: {spec: {containers: [{name: c, image: i}]}}\n",
	  "t.yaml: document 1 (Job default/j): spec.template.spec.restartPolicy: Required value: "
	  "valid values: \"OnFailure\", \"Never\"" },
	{ "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n"
	  "  template: {spec: {restartPolicy: Always, containers: [{name: c, image: i}]}}\n",
	  "t.yaml: document 1 (Job default/j): spec.template.spec.restartPolicy: Required value: "
	  "valid values: \"OnFailure\", \"Never\"" },
	{ "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n"
	  "  template: {spec: {restartPolicy: OnFailure, containers: [{name: c, image: i}]}}\n",
	  NULL },
	{ "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n"
	  "  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n"
	  "    spec: {restartPolicy: Never, containers: [{name: c, image: i}]}\n",
	  "t.yaml: document 1 (Deployment default/d): spec.template.spec.restartPolicy: "
	  "Unsupported value: \"Never\": supported values: \"Always\"" },

	/* more Karpenter rules */
	{ "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: np}\nspec:\n  template:\n"
	  "    spec:\n      nodeClassRef: {group: g, kind: k}\n",
	  NP "spec.template.spec.nodeClassRef.name: Required value" },
	{ "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: np}\nspec:\n  template:\n"
	  "    spec:\n      nodeClassRef: {group: g, kind: k, name: n}\n"
	  "      requirements: [{key: a, operator: In}]\n",
	  NP "spec.template.spec.requirements[0].values: Required value: requirements with "
	  "operator 'In' must have a value defined" },
	{ NPREQ("{key: a, operator: NotIn, values: []}"),
	  NP "spec.template.spec.requirements[0].values: Required value: requirements with "
	  "operator 'NotIn' must have a value defined" },
	{ NPREQ("{key: a, operator: Exists, values: [x]}"),
	  NP "spec.template.spec.requirements[0].values: Forbidden: may not be specified when "
	  "`operator` is 'Exists' or 'DoesNotExist'" },
	{ NPREQ("{key: a, operator: DoesNotExist, values: [x]}"),
	  NP "spec.template.spec.requirements[0].values: Forbidden: may not be specified when "
	  "`operator` is 'Exists' or 'DoesNotExist'" },
	{ NPREQ("{key: a, operator: Gt, values: [three]}"),
	  NP "spec.template.spec.requirements[0].values[0]: Invalid value: \"three\": requirements "
	  "operator 'Gt' or 'Lt' must have a single positive integer value" },
	{ NPREQ("{key: a, operator: Lt, values: [\"-1\"]}"),
	  NP "spec.template.spec.requirements[0].values[0]: Invalid value: \"-1\": requirements "
	  "operator 'Gt' or 'Lt' must have a single positive integer value" },
	{ NPREQ("{key: a, operator: Gt, values: [\"1.5\"]}"),
	  NP "spec.template.spec.requirements[0].values[0]: Invalid value: \"1.5\": requirements "
	  "operator 'Gt' or 'Lt' must have a single positive integer value" },
	{ NPREQ("{key: a, operator: Gt, values: [\"9223372036854775808\"]}"),
	  NP "spec.template.spec.requirements[0].values[0]: Invalid value: "
	  "\"9223372036854775808\": requirements operator 'Gt' or 'Lt' must have a single "
	  "positive integer value" },
	{ NPREQ("{key: a, operator: Gt, values: [\"\"]}"),
	  NP "spec.template.spec.requirements[0].values[0]: Invalid value: \"\": requirements "
	  "operator 'Gt' or 'Lt' must have a single positive integer value" },
	{ NPREQ("{key: a, operator: Lt, values: [\"5\", \"9\"]}"),
	  NP "spec.template.spec.requirements[0].values: Required value: must be specified single "
	  "value when `operator` is 'Lt' or 'Gt'" },
	/* valid: zero, a sign, leading zeros, the largest int64 */
	{ NPREQ("{key: a, operator: Gt, values: [\"0\"]}"), NULL },
	{ NPREQ("{key: a, operator: Lt, values: [\"+7\"]}"), NULL },
	{ NPREQ("{key: a, operator: Gt, values: [\"007\"]}"), NULL },
	{ NPREQ("{key: a, operator: Gt, values: [\"9223372036854775807\"]}"), NULL },
	{ NPREQ("{key: a, operator: Exists}"), NULL },
	{ NPREQ("{key: a, operator: In, values: [x, z], minValues: 2}"), NULL },
	{ "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: np}\nspec:\n  template:\n"
	  "    spec:\n      nodeClassRef: {group: g, kind: k, name: n}\n"
	  "      requirements: [{key: a, operator: In, values: [x], minValues: 2}]\n",
	  NP "spec.template.spec.requirements[0].minValues: Invalid value: 2: requirements with "
	  "'minValues' must have at least that many values specified in the 'values' field" },
	{ NPREQ("{key: a, operator: In, values: [x], minValues: 0}"),
	  NP "spec.template.spec.requirements[0].minValues: Invalid value: 0: should be greater "
	  "than or equal to 1" },
	{ NPREQ("{key: a, operator: Exists, minValues: 51}"),
	  NP "spec.template.spec.requirements[0].minValues: Invalid value: 51: should be less "
	  "than or equal to 50" },
	{ "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: np}\nspec:\n  template:\n"
	  "    spec:\n      nodeClassRef: {group: g, kind: k, name: n}\n"
	  "      taints: [{key: k}]\n",
	  NP "spec.template.spec.taints[0].effect: Required value" },
	{ "apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: nc}\nspec:\n"
	  "  nodeClassRef: {group: g, kind: k, name: n}\n"
	  "  requirements: [{operator: Exists}]\n",
	  "t.yaml: document 1 (NodeClaim nc): spec.requirements[0].key: Required value" },

	/* NodeOverlay (the nodeoverlays.karpenter.sh CRD) */
	{ OVL("  requirements: []\n  price: '5.00'\n  weight: 10000\n"), NULL },
	{ OVL("  requirements: [{key: karpenter.sh/nodepool, operator: In, values: [gpu]}]\n"
	      "  priceAdjustment: '-100%'\n  weight: 1\n"), NULL },
	{ OVL("  requirements: []\n  capacity: {example.com/fuse: 1, hugepages-2Mi: 100Mi}\n"), NULL },
	{ OVREQ("{key: karpenter.sh/capacity-type, operator: NotIn, values: [spot]}"), NULL },
	{ OVREQ("{key: karpenter.k8s.aws/instance-gpu-count, operator: Gt, values: ['3']}"), NULL },
	{ OVREQ("{key: example.com/Team, operator: Exists}"), NULL },
	{ "apiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: o}\n",
	  OP "spec: Required value" },
	{ OVL("  price: '1'\n"), OP "spec.requirements: Required value" },
	{ OVL("  requirements: []\n  price: '1'\n  priceAdjustment: '+1'\n"),
	  OP "spec: Invalid value: \"object\": cannot set both 'price' and 'priceAdjustment'" },
	{ OVL("  requirements: []\n  price: '-1'\n"),
	  OP "spec.price: Invalid value: \"-1\": should match '^\\d+(\\.\\d+)?$'" },
	{ OVL("  requirements: []\n  price: '1.'\n"),
	  OP "spec.price: Invalid value: \"1.\": should match '^\\d+(\\.\\d+)?$'" },
	{ OVL("  requirements: []\n  price: 5\n"),
	  OP "spec.price: Invalid value: 5: must be a string" },
	{ OVL("  requirements: []\n  priceAdjustment: '10%'\n"),
	  OP "spec.priceAdjustment: Invalid value: \"10%\": should match "
	  "'^(([+-]{1}(\\d*\\.?\\d+))|(\\+{1}\\d*\\.?\\d+%)|(^(-\\d{1,2}(\\.\\d+)?%)$)|"
	  "(-100%))$'" },
	{ OVL("  requirements: []\n  priceAdjustment: '-150%'\n"),
	  OP "spec.priceAdjustment: Invalid value: \"-150%\": should match "
	  "'^(([+-]{1}(\\d*\\.?\\d+))|(\\+{1}\\d*\\.?\\d+%)|(^(-\\d{1,2}(\\.\\d+)?%)$)|"
	  "(-100%))$'" },
	{ OVL("  requirements: []\n  priceAdjustment: '+150%'\n"), NULL },
	{ OVL("  requirements: []\n  priceAdjustment: '-99.5%'\n"), NULL },
	{ OVL("  requirements: []\n  priceAdjustment: '+.5'\n"), NULL },
	{ OVL("  requirements: []\n  capacity: {example.com/fuse: 1, memory: 1Gi}\n"),
	  OP "spec.capacity: Invalid value: \"object\": invalid resource restricted" },
	{ OVL("  requirements: []\n  price: '1'\n  weight: 0\n"),
	  OP "spec.weight: Invalid value: 0: should be greater than or equal to 1" },
	{ OVL("  requirements: []\n  price: '1'\n  weight: 10001\n"),
	  OP "spec.weight: Invalid value: 10001: should be less than or equal to 10000" },
	{ OVREQ("{key: a, operator: In}"),
	  OP "spec.requirements: Invalid value: \"array\": requirements with operator 'In' must "
	  "have a value defined" },
	{ OVREQ("{key: a, operator: NotIn, values: []}"),
	  OP "spec.requirements: Invalid value: \"array\": requirements with operator 'NotIn' "
	  "must have a value defined" },
	{ OVREQ("{key: a, operator: Gt, values: ['1']}, {key: b, operator: Lt, values: [x]}"),
	  OP "spec.requirements: Invalid value: \"array\": requirements operator 'Gt' or 'Lt' "
	  "must have a single positive integer value" },
	{ OVREQ("{key: a, operator: Gte, values: ['1']}"),
	  OP "spec.requirements[0].operator: Unsupported value: \"Gte\": supported values: "
	  "\"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\"" },
	{ OVREQ("{operator: Exists}"), OP "spec.requirements[0].key: Required value" },
	{ OVREQ("{key: karpenter.sh/team, operator: Exists}"),
	  OP "spec.requirements[0].key: Invalid value: \"string\": label domain \"karpenter.sh\" "
	  "is restricted" },
	{ OVREQ("{key: kubernetes.io/hostname, operator: Exists}"),
	  OP "spec.requirements[0].key: Invalid value: \"string\": label "
	  "\"kubernetes.io/hostname\" is restricted" },
	{ OVREQ("{key: Example.com/a, operator: Exists}"),
	  OP "spec.requirements[0].key: Invalid value: \"Example.com/a\": should match "
	  "'^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\\/))?"
	  "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$'" },
	{ OVREQ("{key: a/b/c, operator: Exists}"),
	  OP "spec.requirements[0].key: Invalid value: \"a/b/c\": should match "
	  "'^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\\/))?"
	  "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$'" },
	{ OVREQ("{key: a, operator: In, values: [-x]}"),
	  OP "spec.requirements[0].values[0]: Invalid value: \"-x\": should match "
	  "'^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$'" },
	{ OVREQ("{key: a, operator: In, values: [x123456789012345678901234567890123456789012345678"
		"901234567890123]}"),
	  OP "spec.requirements[0].values[0]: Too long: may not be more than 63 bytes" },

	/* metav1.Time fields: RFC 3339 as Go's time.Parse reads it (QA-41) */
	{ DEVICE("    taints: [{key: k, effect: NoSchedule, timeAdded: '2026-01-02T03:04:05Z'},\n"
		 "             {key: l, effect: NoSchedule,\n"
		 "              timeAdded: 2026-01-02T03:04:05.5+01:00}]\n"),
	  NULL },
	{ DEVICE("    taints: [{key: k, effect: NoSchedule, timeAdded: yesterday}]\n"),
	  SP "spec.devices[0].taints[0].timeAdded: parsing time \"yesterday\"" GO_TIME
	  "\"yesterday\" as \"2006\"" },
	{ RULE("  taint: {key: k, effect: None, timeAdded: '2026-02-30T00:00:00Z'}\n"),
	  RP "spec.taint.timeAdded: parsing time \"2026-02-30T00:00:00Z\": day out of range" },
	{ "apiVersion: v1\nkind: Pod\nmetadata: {name: p, creationTimestamp: notatime}\n"
	  "spec:\n  containers: [{name: c, image: i}]\n",
	  PP "metadata.creationTimestamp: parsing time \"notatime\"" GO_TIME "\"notatime\" as "
	  "\"2006\"" },
	{ "apiVersion: v1\nkind: Pod\nmetadata: {name: p, deletionTimestamp: '2026-01-02 03:04:05'}\n"
	  "spec:\n  containers: [{name: c, image: i}]\n",
	  PP "metadata.deletionTimestamp: parsing time \"2026-01-02 03:04:05\"" GO_TIME
	  "\" 03:04:05\" as \"T\"" },
	{ COND("{type: T, status: 'True', reason: R, lastTransitionTime: '2026-01-02t03:04:05z'}"),
	  RP "status.conditions[0].lastTransitionTime: parsing time \"2026-01-02t03:04:05z\""
	  GO_TIME "\"t03:04:05z\" as \"T\"" },
	{ CLAIM_HEAD REQ1 "status:\n  allocation: {allocationTimestamp: '2026-01-02T03:04:60Z'}\n",
	  CP "status.allocation.allocationTimestamp: parsing time \"2026-01-02T03:04:60Z\": second "
	  "out of range" },

	/* NodePool durations and disruption (QA-33) */
	{ NPOOL("      expireAfter: Never\n      terminationGracePeriod: 24h\n",
		"  disruption:\n    consolidationPolicy: WhenEmpty\n    consolidateAfter: 1h30m\n"
		"    budgets:\n    - nodes: '10%'\n"
		"    - {nodes: '0', schedule: '0 9 * * mon-fri', duration: 8h,\n"
		"       reasons: [Drifted, Empty]}\n"
		"    - {nodes: '100%', schedule: '@daily', duration: 1h30m0s}\n"
		"    - {nodes: '25', schedule: \"*/5\\t*\\n* * *\", duration: 90m}\n"), NULL },
	{ NPD("    consolidateAfter: Never\n    consolidationPolicy: WhenEmptyOrUnderutilized\n"),
	  NULL },
	{ NPOOL("      expireAfter: 1y\n", ""),
	  NP "spec.template.spec.expireAfter: Invalid value: \"1y\": " NP_DURATION },
	{ NPOOL("      expireAfter: 1h 30m\n", ""),
	  NP "spec.template.spec.expireAfter: Invalid value: \"1h 30m\": " NP_DURATION },
	{ NPOOL("      terminationGracePeriod: Never\n", ""),
	  NP "spec.template.spec.terminationGracePeriod: Invalid value: \"Never\": should match "
	  "'^([0-9]+(s|m|h))+$'" },
	{ NPD("    consolidateAfter: 5q\n"),
	  NP "spec.disruption.consolidateAfter: Invalid value: \"5q\": " NP_DURATION },
	{ NPD("    consolidationPolicy: WhenEmpty\n"),
	  NP "spec.disruption.consolidateAfter: Required value" },
	{ NPD("    consolidateAfter: 30s\n    consolidationPolicy: WhenUnderutilized\n"),
	  NP "spec.disruption.consolidationPolicy: Unsupported value: \"WhenUnderutilized\": "
	  "supported values: \"WhenEmpty\", \"WhenEmptyOrUnderutilized\"" },
	{ NPD("    consolidateAfter: 30s\n    budgets: [{nodes: '101%'}]\n"),
	  NP "spec.disruption.budgets[0].nodes: Invalid value: \"101%\": should match "
	  "'^((100|[0-9]{1,2})%|[0-9]+)$'" },
	{ NPD("    consolidateAfter: 30s\n    budgets: [{nodes: ten}]\n"),
	  NP "spec.disruption.budgets[0].nodes: Invalid value: \"ten\": should match "
	  "'^((100|[0-9]{1,2})%|[0-9]+)$'" },
	{ NPD("    consolidateAfter: 30s\n    budgets: [{nodes: '1', schedule: '0 9 * *', "
	      "duration: 1h}]\n"),
	  NP "spec.disruption.budgets[0].schedule: Invalid value: \"0 9 * *\": should match "
	  "'^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\\s(.+)\\s(.+)"
	  "\\s(.+)\\s(.+))$'" },
	{ NPD("    consolidateAfter: 30s\n    budgets: [{nodes: '1', schedule: '@daily', "
	      "duration: 30s}]\n"),
	  NP "spec.disruption.budgets[0].duration: Invalid value: \"30s\": should match "
	  "'^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$'" },
	{ NPD("    consolidateAfter: 30s\n    budgets: [{nodes: '1'}, {nodes: '2', "
	      "schedule: '@daily'}]\n"),
	  NP "spec.disruption.budgets: Invalid value: \"array\": 'schedule' must be set with "
	  "'duration'" },
	{ NPD("    consolidateAfter: 30s\n    budgets: [{nodes: '1', reasons: [Expired]}]\n"),
	  NP "spec.disruption.budgets[0].reasons[0]: Unsupported value: \"Expired\": supported "
	  "values: \"Underutilized\", \"Empty\", \"Drifted\"" },
	{ NPD("    consolidateAfter: 30s\n    budgets: [{nodes: '1', reasons: [Empty, Empty]}]\n"),
	  NP "spec.disruption.budgets[0].reasons[1]: Duplicate value: \"Empty\"" },

	/* EC2NodeClass (QA-33) */
	{ EC2(""), NULL },
	{ EC2("  amiFamily: Custom\n"), NULL },
	{ EC2_HEAD "  instanceProfile: p\n" EC2_TERMS EC2_AMI, NULL },
	{ EC2R(EC2_TERMS "  amiSelectorTerms: [{id: ami-0abc}, {name: my-ami, owner: self}]\n"
	       "  amiFamily: AL2023\n"), NULL },
	{ EC2AMI("[{alias: bottlerocket@v1.10.0}]"), NULL },
	{ EC2AMI("[{alias: al2023@v20240807}]"), NULL },
	{ EC2AMI("[{alias: windows2022@latest}]"), NULL },
	{ EC2AMI("[{ssmParameter: /aws/service/x, tags: {a: b}}]\n  amiFamily: AL2023"), NULL },
	{ EC2("  metadataOptions: {httpEndpoint: enabled, httpProtocolIPv6: disabled, "
	      "httpPutResponseHopLimit: 64, httpTokens: optional}\n"
	      "  blockDeviceMappings:\n"
	      "  - {deviceName: /dev/xvda, rootVolume: true,\n"
	      "     ebs: {volumeSize: 59000Gi, volumeType: gp3}}\n"
	      "  - {deviceName: /dev/xvdb, ebs: {volumeSize: 64000G}}\n"
	      "  - {deviceName: /dev/xvdc, ebs: {volumeSize: 58Ti}}\n"
	      "  - {deviceName: /dev/xvdd, ebs: {volumeSize: 17Ti}}\n"
	      "  - {deviceName: /dev/xvde, ebs: {volumeSize: 64T}}\n"
	      "  - {deviceName: /dev/xvdf, ebs: {snapshotID: snap-1}}\n"
	      "  - {deviceName: /dev/xvdg}\n"
	      "  kubelet: {maxPods: 110, imageGCHighThresholdPercent: 85, "
	      "imageGCLowThresholdPercent: 80}\n  tags: {team: ml}\n"), NULL },
	/* the CRD's !self.all(...) rules only fail when every term breaks them */
	{ EC2SG("[{id: sg-1, name: web}, {tags: {a: b}}]"), NULL },
	{ EC2_HEAD EC2_TERMS EC2_AMI,
	  EP "spec: Invalid value: \"object\": must specify exactly one of "
	  "['role', 'instanceProfile']" },
	{ EC2("  instanceProfile: p\n"),
	  EP "spec: Invalid value: \"object\": must specify exactly one of "
	  "['role', 'instanceProfile']" },
	{ EC2_HEAD "  role: ''\n" EC2_TERMS EC2_AMI,
	  EP "spec.role: Invalid value: \"string\": role cannot be empty" },
	{ EC2_HEAD "  instanceProfile: ''\n" EC2_TERMS EC2_AMI,
	  EP "spec.instanceProfile: Invalid value: \"string\": instanceProfile cannot be empty" },
	{ EC2_HEAD "  role: 5\n" EC2_TERMS EC2_AMI,
	  EP "spec.role: Invalid value: 5: must be a string" },
	{ EC2R(EC2_AMI), EP "spec.subnetSelectorTerms: Required value" },
	{ EC2R(EC2_AMI), EP "spec.securityGroupSelectorTerms: Required value" },
	{ EC2R(EC2_TERMS), EP "spec.amiSelectorTerms: Required value" },
	{ EC2AMI("[]"), EP "spec.amiSelectorTerms: Invalid value: 0: should have at least 1 items" },
	{ EC2R("  subnetSelectorTerms: []\n  securityGroupSelectorTerms: [{tags: {a: b}}]\n" EC2_AMI),
	  EP "spec.subnetSelectorTerms: Invalid value: \"array\": subnetSelectorTerms cannot be "
	  "empty" },
	{ EC2R("  subnetSelectorTerms: []\n  securityGroupSelectorTerms: [{tags: {a: b}}]\n" EC2_AMI),
	  EP "spec.subnetSelectorTerms: Invalid value: \"array\": 'id' is mutually exclusive, cannot "
	  "be set with a combination of other fields in a subnet selector term" },
	{ EC2R("  subnetSelectorTerms: [{id: subnet-1, tags: {a: b}}]\n"
	       "  securityGroupSelectorTerms: [{tags: {a: b}}]\n" EC2_AMI),
	  EP "spec.subnetSelectorTerms: Invalid value: \"array\": 'id' is mutually exclusive, cannot "
	  "be set with a combination of other fields in a subnet selector term" },
	{ EC2R("  subnetSelectorTerms: [{id: vpc-1}]\n"
	       "  securityGroupSelectorTerms: [{tags: {a: b}}]\n" EC2_AMI),
	  EP "spec.subnetSelectorTerms[0].id: Invalid value: \"vpc-1\": should match "
	  "'subnet-[0-9a-z]+'" },
	{ EC2R("  subnetSelectorTerms: [{tags: {a: ''}}]\n"
	       "  securityGroupSelectorTerms: [{tags: {a: b}}]\n" EC2_AMI),
	  EP "spec.subnetSelectorTerms[0].tags: Invalid value: \"object\": empty tag keys or values "
	  "aren't supported" },
	{ EC2SG("[{}]"), EP "spec.securityGroupSelectorTerms: Invalid value: \"array\": expected at "
	  "least one, got none, ['tags', 'id', 'name']" },
	{ EC2SG("[{tags: {}}]"), NULL },
	{ EC2SG("[{id: sg-1, name: web}]"),
	  EP "spec.securityGroupSelectorTerms: Invalid value: \"array\": 'id' is mutually exclusive, "
	  "cannot be set with a combination of other fields in a security group selector term" },
	{ EC2SG("[{id: sg-1, name: web}]"),
	  EP "spec.securityGroupSelectorTerms: Invalid value: \"array\": 'name' is mutually "
	  "exclusive, cannot be set with a combination of other fields in a security group selector "
	  "term" },
	{ EC2AMI("[{alias: 'al2023@'}]"),
	  EP "spec.amiSelectorTerms[0].alias: Invalid value: \"string\": 'alias' is improperly "
	  "formatted, must match the format 'family@version'" },
	{ EC2AMI("[{alias: ubuntu@latest}]"),
	  EP "spec.amiSelectorTerms[0].alias: Invalid value: \"string\": family is not supported, "
	  "must be one of the following: 'al2', 'al2023', 'bottlerocket', 'windows2019', "
	  "'windows2022'" },
	{ EC2AMI("[{alias: windows2019@v20240101}]"),
	  EP "spec.amiSelectorTerms[0].alias: Invalid value: \"string\": windows families may only "
	  "specify version 'latest'" },
	{ EC2AMI("[{alias: al2023@v20240807-with-a-long-suffix}]"),
	  EP "spec.amiSelectorTerms[0].alias: Too long: may not be more than 30 bytes" },
	{ EC2AMI("[{alias: al2023@latest}, {id: ami-1}]"),
	  EP "spec.amiSelectorTerms: Invalid value: \"array\": 'alias' is mutually exclusive, cannot "
	  "be set with a combination of other amiSelectorTerms" },
	{ EC2AMI("[{alias: al2023@latest, owner: self}]"),
	  EP "spec.amiSelectorTerms: Invalid value: \"array\": 'alias' is mutually exclusive, cannot "
	  "be set with a combination of other fields in amiSelectorTerms" },
	{ EC2AMI("[{id: ami-1, name: x}]\n  amiFamily: AL2023"),
	  EP "spec.amiSelectorTerms: Invalid value: \"array\": 'id' is mutually exclusive, cannot be "
	  "set with a combination of other fields in amiSelectorTerms" },
	{ EC2AMI("[{owner: self}]\n  amiFamily: AL2023"),
	  EP "spec.amiSelectorTerms: Invalid value: \"array\": expected at least one, got none, "
	  "['tags', 'id', 'name', 'alias', 'ssmParameter']" },
	{ EC2AMI("[{id: img-1}]\n  amiFamily: AL2023"),
	  EP "spec.amiSelectorTerms[0].id: Invalid value: \"img-1\": should match 'ami-[0-9a-z]+'" },
	{ EC2AMI("[{name: my-ami}]"),
	  EP "spec: Invalid value: \"object\": must specify amiFamily if amiSelectorTerms does not "
	  "contain an alias" },
	{ EC2("  amiFamily: AL2\n"),
	  EP "spec: Invalid value: \"object\": if set, amiFamily must be 'AL2023' or 'Custom' when "
	  "using an AL2023 alias" },
	{ EC2AMI("[{alias: bottlerocket@latest}]\n  amiFamily: AL2023"),
	  EP "spec: Invalid value: \"object\": if set, amiFamily must be 'Bottlerocket' or 'Custom' "
	  "when using a Bottlerocket alias" },
	{ EC2("  amiFamily: Ubuntu\n"),
	  EP "spec.amiFamily: Unsupported value: \"Ubuntu\": supported values: \"AL2\", \"AL2023\", "
	  "\"Bottlerocket\", \"Custom\", \"Windows2019\", \"Windows2022\"" },
	{ EC2("  metadataOptions: {httpTokens: sometimes}\n"),
	  EP "spec.metadataOptions.httpTokens: Unsupported value: \"sometimes\": supported values: "
	  "\"required\", \"optional\"" },
	{ EC2("  metadataOptions: {httpEndpoint: 'on'}\n"),
	  EP "spec.metadataOptions.httpEndpoint: Unsupported value: \"on\": supported values: "
	  "\"enabled\", \"disabled\"" },
	{ EC2("  metadataOptions: {httpProtocolIPv6: yes please}\n"),
	  EP "spec.metadataOptions.httpProtocolIPv6: Unsupported value: \"yes please\": supported "
	  "values: \"enabled\", \"disabled\"" },
	{ EC2("  metadataOptions: {httpPutResponseHopLimit: 0}\n"),
	  EP "spec.metadataOptions.httpPutResponseHopLimit: Invalid value: 0: should be greater than "
	  "or equal to 1" },
	{ EC2("  metadataOptions: {httpPutResponseHopLimit: 65}\n"),
	  EP "spec.metadataOptions.httpPutResponseHopLimit: Invalid value: 65: should be less than or "
	  "equal to 64" },
	{ EC2("  blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeSize: 10Xi}}]\n"),
	  EP "spec.blockDeviceMappings[0].ebs.volumeSize: Invalid value: \"10Xi\": "
	  VOLUME_SIZE_PATTERN },
	{ EC2("  blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeSize: 59001Gi}}]\n"),
	  EP "spec.blockDeviceMappings[0].ebs.volumeSize: Invalid value: \"59001Gi\": "
	  VOLUME_SIZE_PATTERN },
	{ EC2("  blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeSize: 018Ti}}]\n"),
	  EP "spec.blockDeviceMappings[0].ebs.volumeSize: Invalid value: \"018Ti\": "
	  VOLUME_SIZE_PATTERN },
	{ EC2("  blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeSize: 18Ti}}]\n"),
	  EP "spec.blockDeviceMappings[0].ebs.volumeSize: Invalid value: \"18Ti\": "
	  VOLUME_SIZE_PATTERN },
	{ EC2("  blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeSize: 1Gi, "
	      "volumeType: gp4}}]\n"),
	  EP "spec.blockDeviceMappings[0].ebs.volumeType: Unsupported value: \"gp4\": supported "
	  "values: \"standard\", \"io1\", \"io2\", \"gp2\", \"sc1\", \"st1\", \"gp3\"" },
	{ EC2("  blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {encrypted: true}}]\n"),
	  EP "spec.blockDeviceMappings[0].ebs: Invalid value: \"object\": snapshotID or volumeSize "
	  "must be defined" },
	{ EC2("  blockDeviceMappings: [{rootVolume: true, ebs: {volumeSize: 1Gi}}, "
	      "{rootVolume: true, ebs: {volumeSize: 2Gi}}]\n"),
	  EP "spec.blockDeviceMappings: Invalid value: \"array\": must have only one "
	  "blockDeviceMappings with rootVolume" },
	{ EC2("  tags: {karpenter.sh/nodepool: x}\n"),
	  EP "spec.tags: Invalid value: \"object\": tag contains a restricted tag matching "
	  "karpenter.sh/nodepool" },
	{ EC2("  tags: {kubernetes.io/cluster/demo: owned}\n"),
	  EP "spec.tags: Invalid value: \"object\": tag contains a restricted tag matching "
	  "kubernetes.io/cluster/" },
	{ EC2("  tags: {'': x}\n"),
	  EP "spec.tags: Invalid value: \"object\": empty tag keys aren't supported" },
	{ EC2("  kubelet: {imageGCHighThresholdPercent: 80, imageGCLowThresholdPercent: 85}\n"),
	  EP "spec.kubelet: Invalid value: \"object\": imageGCHighThresholdPercent must be greater "
	  "than imageGCLowThresholdPercent" },
	{ EC2("  kubelet: {maxPods: -1}\n"),
	  EP "spec.kubelet.maxPods: Invalid value: -1: should be greater than or equal to 0" },
	{ EC2("  kubelet: {imageGCHighThresholdPercent: 101}\n"),
	  EP "spec.kubelet.imageGCHighThresholdPercent: Invalid value: 101: should be less than or "
	  "equal to 100" },
};

/* Load and validate one manifest; errors (decode and validation) in errs. */
static struct model_set *check(const char *yaml, struct dt_diags *errs)
{
	struct model_set *s = model_set_new();
	struct dt_err err;

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	dt_diags_init(errs);
	CU_ASSERT_EQUAL(model_set_load_buffer(s, yaml, strlen(yaml), "t.yaml", errs, &err), 0);
	CU_ASSERT(model_validate_set(s, NULL, errs) >= 0);
	return s;
}

static bool has_msg(const struct dt_diags *d, const char *want)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->msgs[i], want))
			return true;
	return false;
}

static void dump(const struct dt_diags *d)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(stderr, "    got: %s\n", d->msgs[i]);
}

static void test_rules_and_messages(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dt_diags errs;
		struct model_set *s = check(cases[i].yaml, &errs);
		bool ok = cases[i].want ? has_msg(&errs, cases[i].want) : errs.n == 0;

		if (!ok) {
			fprintf(stderr, "\n  case %zu: want %s\n", i,
				cases[i].want ? cases[i].want : "(valid)");
			dump(&errs);
		}
		CU_ASSERT(ok);
		dt_diags_free(&errs);
		model_set_free(s);
	}
}

/* Lists over their limit: generated, because they are long. The item
 * formats are the table's own literals. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static char *repeat(const char *head, const char *item_fmt, int n, const char *tail)
{
	struct strbuf sb = STRBUF_INIT;

	sb_puts(&sb, head);
	for (int i = 0; i < n; i++)
		sb_printf(&sb, item_fmt, i, i);
	sb_puts(&sb, tail);
	return sb_detach(&sb);
}
#pragma GCC diagnostic pop

struct limit_case {
	const char *head, *item, *tail, *want;
	int n;
};

static const struct limit_case limits[] = {
	{ OVL("  price: '1'\n  requirements:\n"), "  - {key: k%d-%d, operator: Exists}\n", "",
	  OP "spec.requirements: Too many: 101: must have at most 100 items", 101 },
	{ CLAIM_HEAD "    requests:\n", "    - {name: r%d, exactly: {deviceClassName: x%d}}\n", "",
	  CP "spec.devices.requests: Too many: 33: must have at most 32 items", 33 },
	{ CLAIM_HEAD "    requests:\n    - name: r\n      firstAvailable:\n",
	  "      - {name: s%d, deviceClassName: x%d}\n", "",
	  CP "spec.devices.requests[0].firstAvailable: Too many: 9: must have at most 8 items", 9 },
	{ CLAIM_HEAD "    requests:\n    - name: r\n      exactly:\n        deviceClassName: x\n"
	  "        selectors:\n", "        - cel: {expression: 'true || %d == %d'}\n", "",
	  CP "spec.devices.requests[0].exactly.selectors: Too many: 33: must have at most 32 items",
	  33 },
	{ CLAIM_HEAD REQ1 "    constraints:\n", "    - {matchAttribute: a.b/c%d%d}\n", "",
	  CP "spec.devices.constraints: Too many: 33: must have at most 32 items", 33 },
	{ CLAIM_HEAD REQ1 "    config:\n", "    - opaque: {driver: d%d.io, parameters: {a: %d}}\n",
	  "", CP "spec.devices.config: Too many: 33: must have at most 32 items", 33 },
	{ CLAIM_HEAD "    requests:\n    - name: r\n      exactly:\n        deviceClassName: x\n"
	  "        tolerations:\n", "        - {key: k%d, value: v%d}\n", "",
	  CP "spec.devices.requests[0].exactly.tolerations: Too many: 17: must have at most 16 items",
	  17 },
	{ SLICE_HEAD "  allNodes: true\n  devices:\n", "  - name: d%d-%d\n", "",
	  SP "spec.devices: Too many: 129: must have at most 128 items", 129 },
	{ SLICE_HEAD "  allNodes: true\n  devices:\n  - {name: t, taints: [{key: k, effect: None}]}\n",
	  "  - name: d%d-%d\n", "",
	  SP "spec.devices: Too many: 65: must have at most 64 items", 64 },
	{ SLICE_HEAD "  allNodes: true\n  devices:\n  - name: d\n    attributes:\n",
	  "      a%d: {int: %d}\n", "",
	  SP "spec.devices[0]: Invalid value: 33: the total number of attributes and capacities "
	  "must not exceed 32", 33 },
	/* a list attribute limits the slice to 64 devices, as taints do */
	{ SLICE_HEAD "  allNodes: true\n  devices:\n  - {name: l, attributes: {a: {ints: [1]}}}\n",
	  "  - name: d%d-%d\n", "",
	  SP "spec.devices: Too many: 65: must have at most 64 items", 64 },
	/* 48 attribute values per device, list items counted one by one */
	{ SLICE_HEAD "  allNodes: true\n  devices:\n  - name: d\n    attributes:\n"
	  "      l: {ints: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]}\n",
	  "      a%d: {int: %d}\n", "",
	  SP "spec.devices[0].attributes: Invalid value: 49: the total number of attribute values "
	  "(list items count individually) must not exceed 48", 29 },
	{ SLICE_HEAD "  allNodes: true\n  devices:\n  - name: d\n    taints:\n",
	  "    - {key: k%d, value: v%d, effect: None}\n", "",
	  SP "spec.devices[0].taints: Too many: 17: must have at most 16 items", 17 },
	{ RULE(RULE_TAINT) "status:\n  conditions:\n",
	  "  - {type: T%d, status: 'True', reason: R%d, lastTransitionTime: '2026-01-02T03:04:05Z'}\n",
	  "", RP "status.conditions: Too many: 9: must have at most 8 items", 9 },
	{ CLASS("  selectors:\n"), "  - cel: {expression: '%d == %d'}\n", "",
	  KP "spec.selectors: Too many: 33: must have at most 32 items", 33 },
	{ CLASS("  config:\n"), "  - opaque: {driver: d%d.io, parameters: {a: %d}}\n", "",
	  KP "spec.config: Too many: 33: must have at most 32 items", 33 },
	{ CLAIM_HEAD REQ1 "status:\n  allocation:\n    devices:\n      results:\n",
	  "      - {request: gpu, driver: d.io, pool: p, device: d%d-%d}\n", "",
	  CP "status.allocation.devices.results: Too many: 33: must have at most 32 items", 33 },
	{ CLAIM_HEAD REQ1 "status:\n  allocation: {}\n  reservedFor:\n",
	  "  - {resource: pods, name: p%d, uid: u%d}\n", "",
	  CP "status.reservedFor: Too many: 257: must have at most 256 items", 257 },
	{ SLICE_HEAD "  allNodes: true\n  sharedCounters:\n",
	  "  - {name: c%d, counters: {m: {value: %d}}}\n", "",
	  SP "spec.sharedCounters: Too many: 9: must have at most 8 items", 9 },
	{ SLICE_HEAD "  allNodes: true\n  sharedCounters:\n  - name: c\n    counters:\n",
	  "      m%d: {value: %d}\n", "",
	  SP "spec.sharedCounters[0].counters: Too many: 33: must have at most 32 items", 33 },
};

static void test_limits(void)
{
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		char *over = repeat(limits[i].head, limits[i].item, limits[i].n, limits[i].tail);
		char *at = repeat(limits[i].head, limits[i].item, limits[i].n - 1, limits[i].tail);
		struct dt_diags errs;
		struct model_set *s;
		bool ok;

		CU_ASSERT_PTR_NOT_NULL_FATAL(over);
		CU_ASSERT_PTR_NOT_NULL_FATAL(at);
		s = check(over, &errs);
		ok = has_msg(&errs, limits[i].want);
		if (!ok) {
			fprintf(stderr, "\n  limit %zu: want %s\n", i, limits[i].want);
			dump(&errs);
		}
		CU_ASSERT(ok);
		dt_diags_free(&errs);
		model_set_free(s);
		/* One less is within the limit: no "Too many" then. */
		s = check(at, &errs);
		for (size_t j = 0; j < errs.n; j++)
			CU_ASSERT(!strstr(errs.msgs[j], "Too many") &&
				  !strstr(errs.msgs[j], "must not exceed"));
		dt_diags_free(&errs);
		model_set_free(s);
		free(over);
		free(at);
	}
}

static void test_cel_length_and_hook(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct dt_diags errs;
	struct model_set *s;

	sb_puts(&sb, CLASS("  selectors:\n  - cel:\n      expression: '"));
	for (int i = 0; i < 10 * 1024 + 1; i++)
		sb_putc(&sb, 'a');
	sb_puts(&sb, "'\n");
	s = check(sb_str(&sb), &errs);
	CU_ASSERT(has_msg(&errs, KP "spec.selectors[0].cel.expression: Too long: may not be more "
			  "than 10240 bytes"));
	dt_diags_free(&errs);
	model_set_free(s);
	sb_free(&sb);
}

static int fake_cel(const char *expr, size_t len, char *msg, size_t msgsz, void *ctx)
{
	int *calls = ctx;

	(*calls)++;
	if (len == 4 && !memcmp(expr, "true", 4))
		return 0;
	if (strstr(expr, "expensive")) {
		snprintf(msg, msgsz, "too complex, exceeds cost limit");
		return -E2BIG;
	}
	snprintf(msg, msgsz, "compilation failed: ERROR: <input>:1:1: undeclared reference");
	return -EINVAL;
}

static void test_cel_callback(void)
{
	const char *yaml = CLASS("  selectors:\n  - cel: {expression: 'true'}\n"
				 "  - cel: {expression: 'nope'}\n"
				 "  - cel: {expression: 'expensive'}\n");
	struct model_validate_opts opts = { .check_cel = fake_cel };
	struct model_set *s = model_set_new();
	struct dt_diags errs;
	int calls = 0;

	opts.cel_ctx = &calls;
	dt_diags_init(&errs);
	CU_ASSERT_EQUAL(model_set_load_buffer(s, yaml, strlen(yaml), "t.yaml", &errs, NULL), 0);
	CU_ASSERT_EQUAL(model_validate_set(s, &opts, &errs), 2);
	CU_ASSERT_EQUAL(calls, 3);
	CU_ASSERT(has_msg(&errs, KP "spec.selectors[1].cel.expression: Invalid value: \"nope\": "
			  "compilation failed: ERROR: <input>:1:1: undeclared reference"));
	CU_ASSERT(has_msg(&errs, KP "spec.selectors[2].cel.expression: Forbidden: too complex, "
			  "exceeds cost limit"));
	dt_diags_free(&errs);
	model_set_free(s);
}

/* All problems of a manifest are reported, not only the first. */
static void test_all_errors_reported(void)
{
	const char *yaml =
		CLAIM("    requests:\n    - name: A\n      exactly: {count: -1}\n"
		      "    - name: A\n") "---\n"
		CLAIM("    requests:\n    - name: gpu\n      exactly: {deviceClassName: x, "
		      "allocationMode: Some}\n");
	struct dt_diags errs;
	struct model_set *s = check(yaml, &errs);

	/* name, deviceClassName, count; name, exactly-one, duplicate; allocationMode;
	 * both claims named c. */
	CU_ASSERT_EQUAL(errs.n, 8);
	CU_ASSERT(has_msg(&errs, "t.yaml: document 2 (ResourceClaim default/c): "
			  "spec.devices.requests[0].exactly.allocationMode: Unsupported value: "
			  "\"Some\": supported values: \"All\", \"ExactCount\""));
	CU_ASSERT(has_msg(&errs, "t.yaml: document 2 (ResourceClaim default/c): metadata.name: "
			  "Duplicate value: \"c\": also defined in t.yaml document 1"));
	if (errs.n != 8)
		dump(&errs);
	dt_diags_free(&errs);
	model_set_free(s);
}

/* A second object of the same kind, namespace and name is an error on its
 * metadata.name naming the first; other kinds, other namespaces and
 * cluster-scoped kinds' namespaces do not make objects the same. */
static void test_duplicates(void)
{
	const char *yaml =
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n---\n"                    /* 1 */
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: other}\n---\n"  /* 2 */
		"apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: p}\n---\n"
		"apiVersion: v1\nkind: List\nitems:\n"                                      /* 4 */
		"- {apiVersion: v1, kind: Pod, metadata: {name: q}}\n"
		"- {apiVersion: v1, kind: List, items: [{apiVersion: v1, kind: Pod, "
		"metadata: {name: p, namespace: default}}]}\n---\n"
		"apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: d, namespace: a}\n"
		"---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\n"
		"metadata: {name: d, namespace: b}\n---\n"                                     /* 6 */
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n";                         /* 7 */
	struct model_set *s = model_set_new();
	struct dt_diags errs;
	struct model_object *o;

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	dt_diags_init(&errs);
	CU_ASSERT_EQUAL(model_set_load_buffer(s, yaml, strlen(yaml), "t.yaml", &errs, NULL), 0);
	CU_ASSERT_EQUAL(model_set_check_duplicates(s, &errs), 3);
	CU_ASSERT_EQUAL(errs.n, 3);
	CU_ASSERT(has_msg(&errs, "t.yaml: document 4, item 1.0 (Pod default/p): metadata.name: "
			  "Duplicate value: \"p\": also defined in t.yaml document 1"));
	CU_ASSERT(has_msg(&errs, "t.yaml: document 7 (Pod default/p): metadata.name: "
			  "Duplicate value: \"p\": also defined in t.yaml document 1"));
	CU_ASSERT(has_msg(&errs, "t.yaml: document 6 (DeviceClass d): metadata.name: "
			  "Duplicate value: \"d\": also defined in t.yaml document 5"));
	if (errs.n != 3)
		dump(&errs);
	/* The first one loaded is the one lookups find. */
	o = model_set_find(s, MODEL_POD, "default", "p");
	CU_ASSERT(o && o->src.document == 1);
	/* model_validate_set reports them too. */
	dt_diags_free(&errs);
	dt_diags_init(&errs);
	CU_ASSERT(model_validate_set(s, NULL, &errs) >= 3);
	CU_ASSERT(has_msg(&errs, "t.yaml: document 7 (Pod default/p): metadata.name: "
			  "Duplicate value: \"p\": also defined in t.yaml document 1"));
	dt_diags_free(&errs);
	model_set_free(s);
}

/* The seed's EC2NodeClass gpu-dra comes in two variants (timesliced.yaml
 * sets nvidia-consumable-capacity): each file is valid on its own, and
 * loading both is the duplicate error. */
static void test_seed_examples_valid(void)
{
	static const char *const files[] = {
		"ec2nodeclass.yaml", "gpu-efa-aligned.yaml", "large-gpu.yaml", "nodepool.yaml",
	};
	struct model_set *s = model_set_new();
	struct dt_diags errs;

	dt_diags_init(&errs);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/examples/seed/%s", DT_SOURCE_DIR, files[i]);
		CU_ASSERT_EQUAL(model_set_load_file(s, path, &errs, NULL), 0);
	}
	CU_ASSERT_EQUAL(model_validate_set(s, NULL, &errs), 0);
	CU_ASSERT_EQUAL(errs.n, 0);
	dump(&errs);
	CU_ASSERT_EQUAL(model_set_count(s, MODEL_RESOURCE_CLAIM_TEMPLATE), 2);
	CU_ASSERT_EQUAL(model_set_count(s, MODEL_POD), 2);
	CU_ASSERT_EQUAL(model_set_count(s, MODEL_NODE_POOL), 1);
	CU_ASSERT_EQUAL(model_set_count(s, MODEL_EC2_NODE_CLASS), 1);
	{
		char path[4096];

		snprintf(path, sizeof(path), "%s/examples/seed/timesliced.yaml", DT_SOURCE_DIR);
		CU_ASSERT_EQUAL(model_set_load_file(s, path, &errs, NULL), 0);
		CU_ASSERT_EQUAL(errs.n, 0);
		CU_ASSERT_EQUAL(model_validate_set(s, NULL, &errs), 1);
		CU_ASSERT_EQUAL_FATAL(errs.n, 1);
		CU_ASSERT(strstr(errs.msgs[0], "timesliced.yaml: document 1 (EC2NodeClass gpu-dra): "
				 "metadata.name: Duplicate value: \"gpu-dra\": also defined in ") != NULL);
		CU_ASSERT(strstr(errs.msgs[0], "ec2nodeclass.yaml document 1") != NULL);
	}
	dt_diags_free(&errs);
	model_set_free(s);
}

/* QA-90, QA-91: a name with a NUL is told once (not also "Required"), and
 * the control bytes of a name are escaped in the message's object. */
/* QA-101: a scalar of the wrong type in a string field is told once: the
 * field was given, so no "must specify one of" follows. */
static void test_wrong_type_told_once(void)
{
	static const char yaml[] = "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\n"
				   "metadata: {name: g}\nspec:\n  schedulingPolicy: {gang: {minCount: 1}}\n"
				   "  resourceClaims: [{name: a, resourceClaimName: y}, "
				   "{name: b, resourceClaimTemplateName: 12}]\n";
	struct dt_diags errs;
	struct model_set *s = check(yaml, &errs);

	CU_ASSERT_EQUAL(errs.n, 2);
	if (errs.n != 2)
		dump(&errs);
	CU_ASSERT(has_msg(&errs, "t.yaml: document 1 (PodGroup default/g): spec.resourceClaims[0]."
			  "resourceClaimName: Invalid value: y: must be a string (YAML reads this "
			  "word as a boolean; quote it)"));
	CU_ASSERT(has_msg(&errs, "t.yaml: document 1 (PodGroup default/g): spec.resourceClaims[1]."
			  "resourceClaimTemplateName: Invalid value: 12: must be a string"));
	dt_diags_free(&errs);
	model_set_free(s);
}

static void test_odd_names_told_once(void)
{
	static const char json[] = "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\","
				   "\"metadata\":{\"name\":\"a\\u0000b\"}}";
	static const char yaml[] = "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\n"
				   "metadata: {name: \"x\\ey\\x01\"}\n";
	struct dt_diags errs;
	struct model_set *s = check(json, &errs);

	CU_ASSERT_EQUAL(errs.n, 1);
	if (errs.n != 1)
		dump(&errs);
	CU_ASSERT(has_msg(&errs, "t.yaml: document 1 (DeviceClass a): metadata.name: Invalid value: "
			  "\"a\\x00b\": must not contain NUL characters"));
	dt_diags_free(&errs);
	model_set_free(s);
	s = check(yaml, &errs);
	CU_ASSERT_EQUAL_FATAL(errs.n, 1);
	CU_ASSERT(strncmp(errs.msgs[0], "t.yaml: document 1 (DeviceClass x\\x1by\\x01): "
			  "metadata.name: Invalid value: \"x\\x1by\\x01\": a lowercase", 93) == 0);
	if (strncmp(errs.msgs[0], "t.yaml: document 1 (DeviceClass x\\x1by\\x01)", 40))
		dump(&errs);
	dt_diags_free(&errs);
	model_set_free(s);
}

DT_SUITE_MAIN("model_validate",
	      DT_TEST(test_rules_and_messages),
	      DT_TEST(test_limits),
	      DT_TEST(test_cel_length_and_hook),
	      DT_TEST(test_cel_callback),
	      DT_TEST(test_all_errors_reported),
	      DT_TEST(test_duplicates),
	      DT_TEST(test_seed_examples_valid),
	      DT_TEST(test_odd_names_told_once),
	      DT_TEST(test_wrong_type_told_once))
