// export.js - flatten the cel-spec conformance suite shipped in
// @bufbuild/cel-spec (testdata/conformance.js, protobuf-JSON test objects)
// into plain cases for the C runner (tests/cel/conformance.c): values,
// bindings and declared types are rewritten as CEL source text and type
// expressions, so the runner needs no protobuf. Cases that need protobuf
// messages are marked with the reason they cannot run.
//
//   node tests/cel/export.js SUITE... > cases.json
'use strict';

const path = require('path');
const { tests } = require(path.join(__dirname, 'node_modules/@bufbuild/cel-spec/dist/cjs/testdata/conformance.js'));

class Skip extends Error {}

const PRIMS = {
	BOOL: 'bool', INT64: 'int', UINT64: 'uint', DOUBLE: 'double', STRING: 'string',
	BYTES: 'bytes',
};
const WELL_KNOWN = {
	TIMESTAMP: 'google.protobuf.Timestamp', DURATION: 'google.protobuf.Duration', ANY: 'dyn',
};

function typeText(t) {
	if (t.primitive) return PRIMS[t.primitive];
	if (t.wellKnown) return WELL_KNOWN[t.wellKnown];
	if (t.listType) return `list(${typeText(t.listType.elemType)})`;
	if (t.mapType) return `map(${typeText(t.mapType.keyType)}, ${typeText(t.mapType.valueType)})`;
	if ('dyn' in t) return 'dyn';
	if ('null' in t) return 'null_type';
	if (t.typeParam) return t.typeParam;
	if ('type' in t) return t.type && Object.keys(t.type).length ? `type(${typeText(t.type)})` : 'type';
	if (t.abstractType) {
		const ps = (t.abstractType.parameterTypes || []).map(typeText);
		return ps.length ? `${t.abstractType.name}(${ps.join(', ')})` : t.abstractType.name;
	}
	if (t.messageType) {
		if (t.messageType === 'google.protobuf.Timestamp' || t.messageType === 'google.protobuf.Duration')
			return t.messageType;
		throw new Skip(`needs protobuf message type ${t.messageType}`);
	}
	if (t.wrapper) throw new Skip('needs protobuf wrapper types');
	if ('error' in t) return '*error*';
	throw new Skip(`unsupported type ${JSON.stringify(t)}`);
}

function bytesText(b64) {
	const buf = Buffer.from(b64, 'base64');
	let s = 'b"';
	for (const c of buf) s += '\\x' + c.toString(16).padStart(2, '0');
	return s + '"';
}

function doubleText(d) {
	if (d === 'NaN') return 'double("NaN")';
	if (d === 'Infinity') return 'double("inf")';
	if (d === '-Infinity') return 'double("-inf")';
	const n = Number(d);
	if (Object.is(n, -0)) return '-0.0';
	let s = String(n);
	if (!/[.eE]/.test(s)) s += '.0';
	return s;
}

function valueText(v) {
	if ('boolValue' in v) return v.boolValue ? 'true' : 'false';
	if ('int64Value' in v) return String(v.int64Value);
	if ('uint64Value' in v) return `${v.uint64Value}u`;
	if ('doubleValue' in v) return doubleText(v.doubleValue);
	if ('stringValue' in v) return JSON.stringify(v.stringValue);
	if ('bytesValue' in v) return bytesText(v.bytesValue);
	if ('nullValue' in v) return 'null';
	if ('listValue' in v) return `[${(v.listValue.values || []).map(valueText).join(', ')}]`;
	if ('mapValue' in v)
		return `{${(v.mapValue.entries || []).map((e) => `${valueText(e.key)}: ${valueText(e.value)}`).join(', ')}}`;
	if ('typeValue' in v) {
		if (/\./.test(v.typeValue) && !/^google\.protobuf\.(Timestamp|Duration)$/.test(v.typeValue))
			throw new Skip(`needs protobuf type ${v.typeValue}`);
		return v.typeValue;
	}
	if ('objectValue' in v) {
		const o = v.objectValue;
		const t = o['@type'] || '';
		if (t.endsWith('/google.protobuf.Timestamp')) return `timestamp(${JSON.stringify(o.value)})`;
		if (t.endsWith('/google.protobuf.Duration')) return `duration(${JSON.stringify(o.value)})`;
		throw new Skip(`needs protobuf message ${t.replace(/^.*\//, '')}`);
	}
	if ('enumValue' in v) throw new Skip('needs protobuf enums');
	throw new Skip(`unsupported value ${JSON.stringify(v).slice(0, 80)}`);
}

function convert(suite, section, t) {
	const o = t.original;
	const c = { suite, section, name: o.name, expr: o.expr };
	try {
		if (o.container) throw new Skip(`needs protobuf container ${o.container}`);
		if (/TestAllTypes|NestedTestAllTypes|google\.protobuf\.(?!Timestamp|Duration)|cel\.expr\.conformance/.test(o.expr))
			throw new Skip('needs protobuf messages');
		c.disableCheck = !!o.disableCheck;
		c.checkOnly = !!o.checkOnly;
		c.decls = [];
		for (const d of o.typeEnv || []) {
			if (d.function) throw new Skip('declares custom functions over abstract types (check-only cases)');
			c.decls.push({ name: d.name, type: typeText(d.ident.type) });
		}
		c.bindings = [];
		for (const [name, b] of Object.entries(o.bindings || {})) {
			if (!b.value) throw new Skip('binding is not a value');
			c.bindings.push({ name, expr: valueText(b.value) });
		}
		if (o.evalError) {
			c.expect = { error: true };
		} else if (o.typedResult) {
			c.expect = {};
			if (o.typedResult.result) c.expect.value = valueText(o.typedResult.result);
			if (o.typedResult.deducedType) c.expect.type = typeText(o.typedResult.deducedType);
		} else if (o.value) {
			c.expect = { value: valueText(o.value) };
		} else {
			c.expect = { value: 'true' };
		}
	} catch (e) {
		if (!(e instanceof Skip)) throw e;
		return { suite, section, name: o.name, expr: o.expr, skip: e.message };
	}
	return c;
}

const want = new Set(process.argv.slice(2));
const out = [];
for (const s of tests.suites) {
	if (want.size && !want.has(s.name)) continue;
	for (const sec of s.suites || []) for (const t of sec.tests || []) out.push(convert(s.name, sec.name, t));
	for (const t of s.tests || []) out.push(convert(s.name, '', t));
}
process.stdout.write(JSON.stringify(out));
