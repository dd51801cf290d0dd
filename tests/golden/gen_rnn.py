"""Golden family `rnn`: the recurrent layers nn.RNN (tanh and relu), nn.LSTM and nn.GRU (1-3
layers, bidirectional, batch_first, no bias, LSTM's proj_size, initial states given or zeros,
unbatched 2-D input, an empty batch, packed sequences of unequal lengths with enforce_sorted
true and false), the cells nn.RNNCell, nn.LSTMCell and nn.GRUCell (batched and 1-D input, states
given or not), and torch.nn.utils.rnn's pack_padded_sequence, pad_packed_sequence, pad_sequence
and pack_sequence; their errors (wrong input size, wrong state shapes and ranks, bad lengths,
bad options).

A layer's parameters are inputs named as in its state_dict, in state_dict order, after the data
(`input`, then `h0`, `c0` and, for packed cases, the int64 `lengths`); the module is built in
eval mode and loads them, so the gradient cases (float64) reach every parameter. Packed cases
pack the padded `input` with its lengths inside the case and record the packed output's data.
Gradient cases (`join=1`) return every output flattened into one vector (output, h_n, c_n), so
that the backward reaches the final states too. float32 and float64 value cases use small
dyadic values (k / 16 for the data, k / 32 for parameters); gradient cases generate.gvals."""

import torch
from torch.nn.utils import rnn as rnn_utils

import generate as g
from generate import In, T

DTYPES = ('float32', 'float64')
MODES = {'RNN_TANH': 'RNN', 'RNN_RELU': 'RNN', 'LSTM': 'LSTM', 'GRU': 'GRU'}


def seeded(out):
    r = g.rng_for('rnngout/%s' % (list(out.shape),))
    return T([round(r.uniform(-1.5, 1.5), 2) for _ in range(out.numel())], g.NAME[out.dtype], list(out.shape))


def vals(d, shape, key, grad=False, scale=1.0):
    if grad:
        return g.gvals(shape, 'rnng/' + key, -1.0, 1.0) * scale
    return g.small(d, shape, 'rnn/' + key) / 4 * scale


def module(args, dtype):
    mode = args['mode']
    kw = dict(num_layers=args.get('num_layers', 1), bias=args.get('bias', True), batch_first=bool(args.get('batch_first')),
              dropout=args.get('dropout', 0.0), bidirectional=bool(args.get('bidirectional')), dtype=dtype)
    if mode == 'LSTM':
        m = torch.nn.LSTM(args['input_size'], args['hidden_size'], proj_size=args.get('proj_size', 0), **kw)
    elif mode == 'GRU':
        m = torch.nn.GRU(args['input_size'], args['hidden_size'], **kw)
    else:
        m = torch.nn.RNN(args['input_size'], args['hidden_size'], nonlinearity='relu' if mode == 'RNN_RELU' else 'tanh',
                         **kw)
    return m.eval()


def joined(outs):
    return torch.cat([o.reshape(-1) for o in outs])


def rnn_fn(names, args):
    def f(*ts):
        kw = dict(zip(names, ts))
        m = module(args, kw['input'].dtype)
        for n in [k for k, _ in m.named_parameters()]:
            delattr(m, n)
            setattr(m, n, kw[n])
        x = kw['input']
        if 'lengths' in kw:
            x = rnn_utils.pack_padded_sequence(x, kw['lengths'], batch_first=bool(args.get('batch_first')),
                                               enforce_sorted=bool(args.get('enforce_sorted', True)))
        if args['mode'] == 'LSTM':
            state = (kw['h0'], kw['c0']) if 'h0' in kw else None
            out, (h, c) = m(x, state)
            outs = [out, h, c]
        else:
            out, h = m(x, kw.get('h0'))
            outs = [out, h]
        if 'lengths' in kw:
            outs[0] = out.data
        return joined(outs) if args.get('join') else tuple(outs)
    return f


def layer_inputs(d, cid, args, shape, states, lengths=None, grad=False, views=None):
    """The data (`input` of `shape`, the states when `states`, `lengths`), then the parameters
    in state_dict order."""
    views = views or {}
    m = module(args, g.DT[d])
    unbatched = len(shape) == 2
    directions = 2 if args.get('bidirectional') else 1
    layers = args.get('num_layers', 1)
    if unbatched:
        batch = None
    elif lengths is not None:
        batch = len(lengths)
    else:
        batch = shape[0] if args.get('batch_first') else shape[1]
    ins = [In('input', vals(d, shape, cid + 'x', grad), views.get('input'), rg=grad)]
    if states:
        real = args.get('proj_size', 0) or args['hidden_size']
        hs = [layers * directions] + ([] if batch is None else [batch])
        ins.append(In('h0', vals(d, hs + [real], cid + 'h0', grad), rg=grad))
        if args['mode'] == 'LSTM':
            ins.append(In('c0', vals(d, hs + [args['hidden_size']], cid + 'c0', grad), rg=grad))
    if lengths is not None:
        ins.append(In('lengths', T(lengths, 'int64', [len(lengths)])))
    for n, p in m.named_parameters():
        ins.append(In(n, vals(d, list(p.shape), cid + n, grad, 0.5), rg=grad))
    return ins


def layer_case(F, cid, args, shape, states, lengths=None, views=None, dtypes=DTYPES, grad=True):
    for d in dtypes:
        ins = layer_inputs(d, cid, args, shape, states, lengths, False, views)
        F.case('%s/%s' % (cid, d), 'rnn', args, ins, rnn_fn([i.name for i in ins], args))
    if grad:
        gargs = dict(args, join=True)
        ins = layer_inputs('float64', cid, args, shape, states, lengths, True, views)
        F.case(cid + '/grad', 'rnn', gargs, ins, rnn_fn([i.name for i in ins], gargs), gout=seeded)


def layers(F):
    base = {'input_size': 3, 'hidden_size': 4}
    # (id, args, input shape, initial states given)
    cases = [
        ('one_layer', {}, [5, 2, 3], False),
        ('states', {}, [4, 3, 3], True),
        ('two_layers', {'num_layers': 2}, [4, 2, 3], True),
        ('three_layers_bidirectional', {'num_layers': 3, 'bidirectional': True}, [3, 2, 3], True),
        ('bidirectional', {'bidirectional': True}, [5, 2, 3], False),
        ('batch_first', {'batch_first': True}, [2, 5, 3], True),
        ('batch_first_bidirectional_two', {'batch_first': True, 'bidirectional': True, 'num_layers': 2}, [3, 4, 3], True),
        ('no_bias', {'bias': False, 'num_layers': 2}, [4, 2, 3], True),
        ('unbatched', {}, [5, 3], True),
        ('unbatched_zero_states_bidirectional', {'bidirectional': True, 'batch_first': True}, [4, 3], False),
        ('one_step', {}, [1, 3, 3], True),
    ]
    for mode in ('RNN_TANH', 'RNN_RELU', 'LSTM', 'GRU'):
        for name, extra, shape, states in cases:
            if mode == 'RNN_RELU' and name not in ('one_layer', 'two_layers', 'bidirectional', 'unbatched'):
                continue
            args = dict(base, mode=mode, **extra)
            layer_case(F, 'rnn/%s/%s' % (mode.lower(), name), args, shape, states)
        # An empty batch: the states and outputs are empty, as PyTorch's.
        if mode != 'RNN_RELU':
            layer_case(F, 'rnn/%s/empty_batch' % mode.lower(), dict(base, mode=mode), [4, 0, 3], False, dtypes=('float32',),
                       grad=False)
    # LSTM's projections.
    proj = [
        ('proj', {'proj_size': 2}, [4, 2, 3], True),
        ('proj_zero_states', {'proj_size': 3}, [4, 2, 3], False),
        ('proj_two_layers_bidirectional', {'proj_size': 2, 'num_layers': 2, 'bidirectional': True}, [3, 2, 3], True),
        ('proj_batch_first_no_bias', {'proj_size': 2, 'batch_first': True, 'bias': False}, [2, 4, 3], True),
        ('proj_unbatched', {'proj_size': 2}, [4, 3], True),
    ]
    for name, extra, shape, states in proj:
        layer_case(F, 'rnn/lstm/' + name, dict(base, mode='LSTM', **extra), shape, states)
    # Strided inputs: the padded input as views.
    for mode in ('LSTM', 'GRU'):
        for view in ('t', 'step2'):
            args = dict(base, mode=mode, num_layers=2)
            ins = layer_inputs('float32', 'rnn/view', args, [4, 3, 3], True, views={'input': view})
            F.case('rnn/%s/view_%s' % (mode.lower(), view), 'rnn', args, ins, rnn_fn([i.name for i in ins], args))


def packed(F):
    base = {'input_size': 3, 'hidden_size': 4}
    # (id, args, padded input shape, lengths, states)
    cases = [
        ('sorted', {}, [5, 3, 3], [5, 3, 2], False),
        ('sorted_ties_states', {}, [4, 3, 3], [4, 4, 1], True),
        ('unsorted', {'enforce_sorted': False}, [5, 3, 3], [2, 5, 3], True),
        ('unsorted_batch_first', {'enforce_sorted': False, 'batch_first': True}, [4, 5, 3], [3, 1, 5, 2], True),
        ('bidirectional', {'bidirectional': True}, [5, 3, 3], [5, 3, 2], True),
        ('bidirectional_unsorted_two', {'bidirectional': True, 'num_layers': 2, 'enforce_sorted': False}, [4, 3, 3],
         [1, 4, 2], True),
        ('padded_longer', {}, [6, 2, 3], [4, 2], False),
    ]
    for mode in ('RNN_TANH', 'LSTM', 'GRU'):
        for name, extra, shape, lengths, states in cases:
            layer_case(F, 'rnn/%s/packed_%s' % (mode.lower(), name), dict(base, mode=mode, **extra), shape, states, lengths)
    args = dict(base, mode='LSTM', proj_size=2, bidirectional=True, enforce_sorted=False)
    layer_case(F, 'rnn/lstm/packed_proj_bidirectional', args, [4, 3, 3], True, [3, 4, 1])


def layer_errors(F):
    base = {'input_size': 3, 'hidden_size': 4}
    # (id, args, input shape, state shapes (h0, c0) or None)
    errs = [
        ('input_size', {}, [4, 2, 5], None),
        ('input_rank', {}, [4, 2, 3, 1], None),
        ('hidden_batch', {}, [4, 2, 3], ([1, 3, 4], [1, 2, 4])),
        ('hidden_size', {}, [4, 2, 3], ([1, 2, 5], [1, 2, 4])),
        ('cell_size', {}, [4, 2, 3], ([1, 2, 4], [1, 2, 5])),
        ('hidden_layers', {'num_layers': 2}, [4, 2, 3], ([1, 2, 4], [1, 2, 4])),
        ('hidden_rank_batched', {}, [4, 2, 3], ([2, 4], [2, 4])),
        ('hidden_rank_unbatched', {}, [4, 3], ([1, 2, 4], [1, 2, 4])),
        ('hidden_directions', {'bidirectional': True}, [4, 2, 3], ([1, 2, 4], [1, 2, 4])),
        ('zero_steps', {}, [0, 2, 3], None),
    ]
    for mode in ('RNN_TANH', 'LSTM', 'GRU'):
        for name, extra, shape, states in errs:
            if name == 'cell_size' and mode != 'LSTM':
                continue
            args = dict(base, mode=mode, **extra)
            cid = 'rnn/%s/error/%s' % (mode.lower(), name)
            ins = layer_inputs('float32', cid, args, shape, False)
            if states:
                ins.insert(1, In('h0', vals('float32', states[0], cid + 'h')))
                if mode == 'LSTM':
                    ins.insert(2, In('c0', vals('float32', states[1], cid + 'c')))
            F.case(cid, 'rnn', args, ins, rnn_fn([i.name for i in ins], args))
    # Packed input of the wrong size, and options PyTorch refuses (ValueError at construction).
    args = dict(base, mode='GRU')
    ins = layer_inputs('float32', 'rnn/packed_error', args, [4, 2, 5], False, [4, 2])
    F.case('rnn/gru/error/packed_input_size', 'rnn', args, ins, rnn_fn([i.name for i in ins], args))
    bad = [('lstm', dict(base, mode='LSTM', proj_size=4)), ('lstm', dict(base, mode='LSTM', proj_size=-1)),
           ('gru', dict(base, mode='GRU', dropout=1.5)), ('rnn_tanh', dict(base, mode='RNN_TANH', dropout=-0.5))]
    for k, (mode, a) in enumerate(bad):
        ins = [In('input', vals('float32', [2, 1, 3], 'bad'))]
        F.case('rnn/%s/error/options_%d' % (mode, k), 'rnn', a, ins, rnn_fn(['input'], a))


# ---- cells ------------------------------------------------------------------------------------------

def cell_module(args, dtype):
    mode, bias = args['mode'], args.get('bias', True)
    if mode == 'LSTM':
        m = torch.nn.LSTMCell(args['input_size'], args['hidden_size'], bias=bias, dtype=dtype)
    elif mode == 'GRU':
        m = torch.nn.GRUCell(args['input_size'], args['hidden_size'], bias=bias, dtype=dtype)
    else:
        m = torch.nn.RNNCell(args['input_size'], args['hidden_size'], bias=bias,
                             nonlinearity='relu' if mode == 'RNN_RELU' else 'tanh', dtype=dtype)
    return m


def cell_fn(names, args):
    def f(*ts):
        kw = dict(zip(names, ts))
        m = cell_module(args, kw['input'].dtype)
        for n in [k for k, _ in m.named_parameters()]:
            delattr(m, n)
            setattr(m, n, kw[n])
        if args['mode'] == 'LSTM':
            h, c = m(kw['input'], (kw['h0'], kw['c0']) if 'h0' in kw else None)
            return joined([h, c]) if args.get('join') else (h, c)
        return m(kw['input'], kw.get('h0'))
    return f


def cell_inputs(d, cid, args, shape, state_shape, grad=False):
    ins = [In('input', vals(d, shape, cid + 'x', grad), rg=grad)]
    if state_shape is not None:
        ins.append(In('h0', vals(d, state_shape, cid + 'h0', grad), rg=grad))
        if args['mode'] == 'LSTM':
            ins.append(In('c0', vals(d, state_shape, cid + 'c0', grad), rg=grad))
    for n, p in cell_module(args, g.DT[d]).named_parameters():
        ins.append(In(n, vals(d, list(p.shape), cid + n, grad, 0.5), rg=grad))
    return ins


def cells(F):
    base = {'input_size': 3, 'hidden_size': 4}
    cases = [
        ('batched', {}, [2, 3], [2, 4]),
        ('zero_state', {}, [3, 3], None),
        ('no_bias', {'bias': False}, [2, 3], [2, 4]),
        ('unbatched', {}, [3], [4]),
        ('unbatched_zero_state', {}, [3], None),
    ]
    for mode in ('RNN_TANH', 'RNN_RELU', 'LSTM', 'GRU'):
        for name, extra, shape, state in cases:
            args = dict(base, mode=mode, **extra)
            cid = 'rnn_cell/%s/%s' % (mode.lower(), name)
            for d in DTYPES:
                ins = cell_inputs(d, cid, args, shape, state)
                F.case('%s/%s' % (cid, d), 'rnn_cell', args, ins, cell_fn([i.name for i in ins], args))
            gargs = dict(args, join=True)
            ins = cell_inputs('float64', cid, args, shape, state, True)
            F.case(cid + '/grad', 'rnn_cell', gargs, ins, cell_fn([i.name for i in ins], gargs), gout=seeded)
        args = dict(base, mode=mode)
        ins = cell_inputs('float32', 'rnn_cell/empty', args, [0, 3], [0, 4])
        F.case('rnn_cell/%s/empty_batch' % mode.lower(), 'rnn_cell', args, ins, cell_fn([i.name for i in ins], args))
        errs = [('input_size', [2, 5], [2, 4]), ('input_rank', [2, 2, 3], None), ('hidden_batch', [2, 3], [3, 4]),
                ('hidden_size', [2, 3], [2, 5])]
        for name, shape, state in errs:
            cid = 'rnn_cell/%s/error/%s' % (mode.lower(), name)
            ins = cell_inputs('float32', cid, args, shape, state)
            F.case(cid, 'rnn_cell', args, ins, cell_fn([i.name for i in ins], args))


# ---- torch.nn.utils.rnn ---------------------------------------------------------------------------

def pack_fn(args):
    def f(x, lengths):
        p = rnn_utils.pack_padded_sequence(x, lengths, batch_first=bool(args.get('batch_first')),
                                           enforce_sorted=bool(args.get('enforce_sorted', True)))
        if args.get('join'):
            return p.data
        outs = [p.data, p.batch_sizes]
        if p.sorted_indices is not None:
            outs += [p.sorted_indices, p.unsorted_indices]
        return tuple(outs)
    return f


def roundtrip_fn(args):
    def f(x, lengths):
        p = rnn_utils.pack_padded_sequence(x, lengths, batch_first=bool(args.get('batch_first')),
                                           enforce_sorted=bool(args.get('enforce_sorted', True)))
        padded, lens = rnn_utils.pad_packed_sequence(p, batch_first=bool(args.get('batch_first')),
                                                     padding_value=args.get('padding_value', 0.0),
                                                     total_length=args.get('total_length'))
        return padded if args.get('join') else (padded, lens)
    return f


def sequences_fn(op, args):
    def f(*seqs):
        if op == 'pad_sequence':
            return rnn_utils.pad_sequence(list(seqs), batch_first=bool(args.get('batch_first')),
                                          padding_value=args.get('padding_value', 0.0))
        p = rnn_utils.pack_sequence(list(seqs), enforce_sorted=bool(args.get('enforce_sorted', True)))
        outs = [p.data, p.batch_sizes]
        if p.sorted_indices is not None:
            outs += [p.sorted_indices, p.unsorted_indices]
        return tuple(outs)
    return f


def utilities(F):
    packs = [
        ('sorted', {}, [4, 3, 2], [4, 2, 1]),
        ('unsorted', {'enforce_sorted': False}, [4, 3, 2], [1, 4, 2]),
        ('batch_first', {'batch_first': True}, [3, 4, 2], [4, 3, 3]),
        ('batch_first_unsorted', {'batch_first': True, 'enforce_sorted': False}, [3, 5], [2, 5, 3]),
        ('trailing_dims', {}, [3, 2, 2, 2], [3, 1]),
    ]
    for name, extra, shape, lengths in packs:
        cid = 'pack_padded_sequence/' + name
        for d in DTYPES:
            ins = [In('input', vals(d, shape, cid)), In('lengths', T(lengths, 'int64', [len(lengths)]))]
            F.case('%s/%s' % (cid, d), 'pack_padded_sequence', extra, ins, pack_fn(extra))
        gargs = dict(extra, join=True)
        ins = [In('input', vals('float64', shape, cid, True), rg=True), In('lengths', T(lengths, 'int64', [len(lengths)]))]
        F.case(cid + '/grad', 'pack_padded_sequence', gargs, ins, pack_fn(gargs), gout=seeded)
        rargs = dict(extra, padding_value=-1.5)
        ins = [In('input', vals('float32', shape, cid)), In('lengths', T(lengths, 'int64', [len(lengths)]))]
        F.case('pad_packed_sequence/' + name, 'pad_packed_sequence', rargs, ins, roundtrip_fn(rargs))
        targs = dict(extra, total_length=6)
        F.case('pad_packed_sequence/%s/total_length' % name, 'pad_packed_sequence', targs, ins, roundtrip_fn(targs))
        gargs = dict(rargs, join=True)
        ins = [In('input', vals('float64', shape, cid, True), rg=True), In('lengths', T(lengths, 'int64', [len(lengths)]))]
        F.case('pad_packed_sequence/%s/grad' % name, 'pad_packed_sequence', gargs, ins, roundtrip_fn(gargs), gout=seeded)
    x = In('input', vals('float32', [4, 3, 2], 'perr'))
    for name, lengths, extra in (('unsorted', [2, 4, 1], {}), ('zero_length', [4, 2, 0], {}),
                                 ('count', [4, 2], {}), ('zero_length_unsorted', [0, 4, 2], {'enforce_sorted': False})):
        F.case('pack_padded_sequence/error/' + name, 'pack_padded_sequence', extra,
               [x, In('lengths', T(lengths, 'int64', [len(lengths)]))], pack_fn(extra))
    targs = {'total_length': 3}
    F.case('pad_packed_sequence/error/total_length', 'pad_packed_sequence', targs,
           [x, In('lengths', T([4, 2, 1], 'int64', [3]))], roundtrip_fn(targs))
    seqs = [('three', [[3, 2], [5, 2], [1, 2]]), ('one_dim', [[2], [4], [3]]), ('sorted', [[4, 3], [4, 3], [2, 3]])]
    for name, shapes in seqs:
        for op, extras in (('pad_sequence', ({}, {'batch_first': True, 'padding_value': 2.5})),
                           ('pack_sequence', ({'enforce_sorted': False},) + (({},) if name == 'sorted' else ()))):
            for k, extra in enumerate(extras):
                cid = '%s/%s/%d' % (op, name, k)
                ins = [In('s%d' % i, vals('float32', sh, cid + str(i))) for i, sh in enumerate(shapes)]
                F.case(cid, op, extra, ins, sequences_fn(op, extra))
                if op == 'pad_sequence':
                    ins = [In('s%d' % i, vals('float64', sh, cid + str(i), True), rg=True) for i, sh in enumerate(shapes)]
                    F.case(cid + '/grad', op, extra, ins, sequences_fn(op, extra), gout=seeded)
    F.case('pad_sequence/error/trailing', 'pad_sequence', {},
           [In('s0', vals('float32', [2, 3], 'pst0')), In('s1', vals('float32', [3, 2], 'pst1'))], sequences_fn('pad_sequence', {}))
    F.case('pack_sequence/error/unsorted', 'pack_sequence', {},
           [In('s0', vals('float32', [2, 3], 'pss0')), In('s1', vals('float32', [3, 3], 'pss1'))], sequences_fn('pack_sequence', {}))


def generate():
    F = g.Family('rnn')
    layers(F)
    packed(F)
    layer_errors(F)
    cells(F)
    utilities(F)
    return F
