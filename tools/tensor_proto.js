// ONNX TensorProto <-> onnxruntime-node tensors: just the fields test data uses (dims, data_type,
// name, raw_data, and the typed float_data / int32_data / int64_data / double_data lists), so
// Node.js scripts read and write the backend-test layout's input_N.pb / output_N.pb without a
// protobuf library.
'use strict';

// ONNX data_type -> [ORT type name, typed array, bytes per element]
const TYPES = {
  1: ['float32', Float32Array, 4], 2: ['uint8', Uint8Array, 1], 3: ['int8', Int8Array, 1],
  4: ['uint16', Uint16Array, 2], 5: ['int16', Int16Array, 2], 6: ['int32', Int32Array, 4],
  7: ['int64', BigInt64Array, 8], 9: ['bool', Uint8Array, 1], 10: ['float16', Uint16Array, 2],
  11: ['float64', Float64Array, 8], 12: ['uint32', Uint32Array, 4], 13: ['uint64', BigUint64Array, 8],
};
const CODE_OF = Object.fromEntries(Object.entries(TYPES).map(([code, [name]]) => [name, Number(code)]));

function readVarint(buf, pos) {
  let value = 0n;
  let shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw new Error('TensorProto: truncated varint');
    const b = buf[pos++];
    value |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return [value, pos];
    shift += 7n;
  }
}

// Signed 64-bit from a varint's two's-complement bits.
const asInt64 = (v) => BigInt.asIntN(64, v);

function decode(buf) {
  const t = { dims: [], dataType: 0, name: '', raw: null, floats: [], ints: [], doubles: [] };
  let pos = 0;
  while (pos < buf.length) {
    let key;
    [key, pos] = readVarint(buf, pos);
    const field = Number(key >> 3n);
    const wire = Number(key & 7n);
    const repeatedVarints = (into, convert) => {
      if (wire === 0) {
        let v;
        [v, pos] = readVarint(buf, pos);
        into.push(convert(v));
        return;
      }
      let len;
      [len, pos] = readVarint(buf, pos);
      const end = pos + Number(len);
      while (pos < end) {
        let v;
        [v, pos] = readVarint(buf, pos);
        into.push(convert(v));
      }
    };
    if (field === 1) repeatedVarints(t.dims, (v) => Number(asInt64(v)));
    else if (field === 2 && wire === 0) {
      let v;
      [v, pos] = readVarint(buf, pos);
      t.dataType = Number(v);
    } else if ((field === 5 || field === 7) && (wire === 0 || wire === 2)) {
      repeatedVarints(t.ints, (v) => (field === 5 ? BigInt.asIntN(32, v) : asInt64(v)));
    } else if (wire === 2) {
      let len;
      [len, pos] = readVarint(buf, pos);
      const bytes = buf.subarray(pos, pos + Number(len));
      pos += Number(len);
      if (field === 8) t.name = bytes.toString('utf8');
      else if (field === 9) t.raw = bytes;
      else if (field === 4) for (let i = 0; i + 4 <= bytes.length; i += 4) t.floats.push(bytes.readFloatLE(i));
      else if (field === 10) for (let i = 0; i + 8 <= bytes.length; i += 8) t.doubles.push(bytes.readDoubleLE(i));
    } else if (wire === 5) {
      if (field === 4) t.floats.push(buf.readFloatLE(pos));
      pos += 4;
    } else if (wire === 1) {
      if (field === 10) t.doubles.push(buf.readDoubleLE(pos));
      pos += 8;
    } else if (wire === 0) {
      [, pos] = readVarint(buf, pos);
    } else {
      throw new Error(`TensorProto: unsupported wire type ${wire} (field ${field})`);
    }
  }
  return t;
}

// TensorProto bytes -> { name, tensor } (an ort.Tensor).
function toOrtTensor(ort, buf) {
  const t = decode(buf);
  const type = TYPES[t.dataType];
  if (!type) throw new Error(`TensorProto '${t.name}': unsupported data_type ${t.dataType}`);
  const [typeName, Arr, size] = type;
  const count = t.dims.reduce((a, b) => a * b, 1);
  let data;
  if (t.raw) {
    if (t.raw.length !== count * size) throw new Error(`TensorProto '${t.name}': raw_data has ${t.raw.length} bytes, dims need ${count * size}`);
    data = new Arr(count);
    Buffer.from(data.buffer).set(t.raw);
  } else {
    const list = t.floats.length ? t.floats : t.doubles.length ? t.doubles : t.ints;
    if (list.length !== count) throw new Error(`TensorProto '${t.name}': ${list.length} values, dims need ${count}`);
    data = Arr.from(list, (v) => (Arr === BigInt64Array || Arr === BigUint64Array ? BigInt(v) : Number(v)));
  }
  if (typeName === 'bool') return { name: t.name, tensor: new ort.Tensor('bool', data, t.dims) };
  return { name: t.name, tensor: new ort.Tensor(typeName, data, t.dims) };
}

function varint(value) {
  let v = BigInt.asUintN(64, BigInt(value));
  const out = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return Buffer.from(out);
}

function lengthDelimited(field, bytes) {
  return Buffer.concat([varint((field << 3) | 2), varint(bytes.length), bytes]);
}

// An ort.Tensor -> TensorProto bytes (dims, data_type, name, raw_data).
function fromOrtTensor(name, tensor) {
  const code = CODE_OF[tensor.type];
  if (!code) throw new Error(`output '${name}': cannot write type ${tensor.type}`);
  const data = tensor.data;
  const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.concat([
    lengthDelimited(1, Buffer.concat(Array.from(tensor.dims, (d) => varint(d)))),
    varint((2 << 3) | 0), varint(code),
    lengthDelimited(8, Buffer.from(name, 'utf8')),
    lengthDelimited(9, raw),
  ]);
}

module.exports = { toOrtTensor, fromOrtTensor };
