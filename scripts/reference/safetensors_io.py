"""Safetensors written and read by hand, for the PyTorch reference scripts here
(torch_train_cnn.py, torch_char_lm.py): save_safetensors(state, path, metadata=None) and
load_safetensors(path) -> (state, metadata).

Why by hand: the `safetensors` package may not be installed, and its writer orders the header by
dtype and name, not state_dict order. The layout: an 8-byte little-endian header length N, N
bytes of JSON {"__metadata__": {...}, name: {"dtype", "shape", "data_offsets"}, ...} padded with
spaces to a multiple of 8, then the tensors' little-endian bytes, back to back in header order.
Locus's reader (src/serialize/safetensors.cpp) insists on what the format says: offsets that
match each shape and dtype and cover the data section exactly, with no holes and nothing after
the last tensor; only dtype, shape and data_offsets in an entry; string values in __metadata__.
Locus's own files carry a CRC-32 under `locus.crc32` in __metadata__, which this reader ignores
(Locus checks it).
"""

import collections
import json
import os
import struct

import numpy as np
import torch

# safetensors dtype names <-> torch / numpy (little-endian) dtypes.
DTYPES = {
    'BOOL': (torch.bool, np.dtype('bool')),
    'U8': (torch.uint8, np.dtype('u1')),
    'I8': (torch.int8, np.dtype('i1')),
    'I16': (torch.int16, np.dtype('<i2')),
    'I32': (torch.int32, np.dtype('<i4')),
    'I64': (torch.int64, np.dtype('<i8')),
    'F16': (torch.float16, np.dtype('<f2')),
    'F32': (torch.float32, np.dtype('<f4')),
    'F64': (torch.float64, np.dtype('<f8')),
}
NAME_OF = {torch_dtype: name for name, (torch_dtype, _) in DTYPES.items()}
NAME_OF[torch.bfloat16] = 'BF16'  # written via int16 bits; numpy has no bfloat16


def save_safetensors(state, path, metadata=None):
    """`state` (name -> tensor) in header order = dict order, data back to back in that order."""
    entries = collections.OrderedDict()
    if metadata:
        entries['__metadata__'] = {str(k): str(v) for k, v in metadata.items()}
    blobs, offset = [], 0
    for name, t in state.items():
        if name == '__metadata__':
            raise ValueError("'__metadata__' is the format's own key, not a tensor name")
        t = t.detach().cpu().contiguous()
        if t.dtype == torch.bfloat16:
            blob = t.view(torch.int16).numpy().astype('<i2').tobytes()
        else:
            if t.dtype not in NAME_OF:
                raise ValueError('tensor %r has dtype %s, which safetensors (as Locus reads it) lacks' % (name, t.dtype))
            blob = t.numpy().astype(DTYPES[NAME_OF[t.dtype]][1], copy=False).tobytes()
        entries[name] = {'dtype': NAME_OF[t.dtype], 'shape': list(t.shape),
                         'data_offsets': [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    header = json.dumps(entries, separators=(',', ':')).encode('utf-8')
    header += b' ' * (-len(header) % 8)  # the data starts 8-byte aligned
    tmp = '%s.tmp.%d' % (path, os.getpid())
    with open(tmp, 'wb') as f:
        f.write(struct.pack('<Q', len(header)))
        f.write(header)
        for blob in blobs:
            f.write(blob)
    os.replace(tmp, path)


def load_safetensors(path):
    """(name -> tensor in header order, metadata). Checks the layout as Locus's reader does."""
    with open(path, 'rb') as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError('%s: shorter than the 8-byte header length' % path)
    (n,) = struct.unpack('<Q', data[:8])
    if n > len(data) - 8:
        raise ValueError('%s: the header claims %d bytes, the file has %d' % (path, n, len(data) - 8))
    header = json.loads(data[8:8 + n].decode('utf-8'), object_pairs_hook=collections.OrderedDict)
    body = memoryview(data)[8 + n:]
    metadata = header.pop('__metadata__', {})
    state, spans = collections.OrderedDict(), []
    for name, e in header.items():
        if set(e) != {'dtype', 'shape', 'data_offsets'}:
            raise ValueError('%s: tensor %r has fields %s' % (path, name, sorted(e)))
        begin, end = e['data_offsets']
        shape = [int(d) for d in e['shape']]
        if e['dtype'] == 'BF16':
            torch_dtype, np_dtype = torch.bfloat16, np.dtype('<i2')
        else:
            torch_dtype, np_dtype = DTYPES[e['dtype']]
        count = int(np.prod(shape, dtype=np.int64))
        if end - begin != count * np_dtype.itemsize or end > len(body):
            raise ValueError('%s: tensor %r has data_offsets [%d, %d] for shape %s and dtype %s'
                             % (path, name, begin, end, shape, e['dtype']))
        a = np.frombuffer(body, dtype=np_dtype, count=count, offset=begin).astype(np_dtype.newbyteorder('='))
        t = torch.from_numpy(a.reshape(shape).copy())
        state[name] = t.view(torch.bfloat16) if torch_dtype == torch.bfloat16 else t
        spans.append((begin, end, name))
    following = 0
    for begin, end, name in sorted(spans):
        if begin != following:
            raise ValueError('%s: tensor %r starts at %d, not %d (a hole or an overlap)' % (path, name, begin, following))
        following = end
    if following != len(body):
        raise ValueError('%s: %d bytes after the last tensor belong to no tensor' % (path, len(body) - following))
    return state, metadata
