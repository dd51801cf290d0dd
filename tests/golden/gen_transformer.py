"""Golden family `transformer`: the transformer's building blocks so far: layer_norm (trailing
dims of any rank, with and without weight and bias), rms_norm (PyTorch 2.4's F.rms_norm, which
1.13 lacks: its formula x * rsqrt(mean(x^2) + eps) * weight, eps defaulting to finfo(dtype).eps),
embedding (int64 and int32 ids, padding_idx with its row's gradient 0, scale_grad_by_freq,
max_norm's renormalisation), scaled_dot_product_attention (PyTorch 2.x's definition, which
1.13 lacks: computed here as its math composition), and nn.MultiheadAttention (its parameters
given as inputs, named as in its state_dict; batch_first, unbatched, kdim/vdim, add_bias_kv,
add_zero_attn, both mask kinds, need_weights and average_attn_weights), each with its errors;
and nn.TransformerEncoderLayer, nn.TransformerDecoderLayer, nn.TransformerEncoder,
nn.TransformerDecoder and nn.Transformer in eval mode (their parameters given as inputs under their
state_dict names, in state_dict order, after the data and the masks; relu and gelu, norm_first,
batch_first, unbatched layers, layer_norm_eps, bool/float/causal attention masks, key padding
masks, final norms, different parameters in each layer of a stack), with
Transformer.generate_square_subsequent_mask and their errors.

float32/float64 value cases use small dyadic values (k / 4); float64 gradient cases use
generate.gvals. `normalized_shape=5` or `normalized_shape=3,4`."""

import torch
import torch.nn.functional as Fn

import generate as g
from generate import In, T

DTYPES = ('float32', 'float64')


def seeded(out):
    r = g.rng_for('trgout/%s' % (list(out.shape),))
    return T([round(r.uniform(-1.5, 1.5), 2) for _ in range(out.numel())], g.NAME[out.dtype], list(out.shape))


def vals(d, shape, key, grad=False):
    return g.gvals(shape, 'trg/' + key) if grad else g.small(d, shape, 'tr/' + key)


def norm_cases(F, op, fn, cases, with_bias):
    for name, xs, ns, affine, extra in cases:
        args = dict({'normalized_shape': ns}, **extra)
        names = ['input'] + (['weight'] + (['bias'] if with_bias else []) if affine else [])
        shapes = [xs] + [ns] * (len(names) - 1)
        cid = '%s/%s' % (op, name)
        for d in DTYPES:
            F.case('%s/%s' % (cid, d), op, args, [In(n, vals(d, s, cid + n)) for n, s in zip(names, shapes)],
                   fn(names, args))
        F.case(cid + '/grad', op, args, [In(n, vals('float64', s, cid + n, True), rg=True) for n, s in zip(names, shapes)],
               fn(names, args), gout=seeded)


def layer_norm_fn(names, args):
    def f(*ts):
        kw = dict(zip(names, ts))
        return Fn.layer_norm(kw['input'], list(args['normalized_shape']), kw.get('weight'), kw.get('bias'),
                             eps=args.get('eps', 1e-5))
    return f


def rms_norm_fn(names, args):
    def f(*ts):
        kw = dict(zip(names, ts))
        x, ns = kw['input'], list(args['normalized_shape'])
        if list(x.shape[x.dim() - len(ns):]) != ns:
            raise RuntimeError('Given normalized_shape=%s, expected input with shape [*, %s], but got input of size%s'
                               % (ns, ', '.join(map(str, ns)), list(x.shape)))
        w = kw.get('weight')
        if w is not None and list(w.shape) != ns:
            raise RuntimeError('Expected weight to be of same shape as normalized_shape')
        eps = args.get('eps', torch.finfo(x.dtype).eps)
        dims = tuple(range(x.dim() - len(ns), x.dim()))
        y = x * torch.rsqrt((x * x).mean(dims, keepdim=True) + eps)
        return y * w if w is not None else y
    return f


def norms(F):
    cases = [
        ('3d_last', [2, 3, 5], [5], True, {}),
        ('3d_last_plain', [2, 3, 5], [5], False, {}),
        ('3d_two_dims', [2, 3, 4], [3, 4], True, {'eps': 1e-3}),
        ('1d', [6], [6], True, {}),
        ('4d_last', [2, 2, 3, 4], [4], True, {}),
        ('whole', [2, 3, 4], [2, 3, 4], False, {'eps': 0.1}),
    ]
    norm_cases(F, 'layer_norm', layer_norm_fn, cases, True)
    norm_cases(F, 'rms_norm', rms_norm_fn, cases + [('eps_given', [3, 5], [5], True, {'eps': 1e-2})], False)
    for view in ('t', 'step2'):
        for op, fn, with_bias in (('layer_norm', layer_norm_fn, True), ('rms_norm', rms_norm_fn, False)):
            names = ['input', 'weight'] + (['bias'] if with_bias else [])
            specs = [In('input', vals('float32', [3, 4], 'v' + op + view), view)] + \
                [In(n, vals('float32', [4], 'v' + op + view + n)) for n in names[1:]]
            F.case('%s/view_%s' % (op, view), op, {'normalized_shape': [4]}, specs, fn(names, {'normalized_shape': [4]}))
    errs = [
        ('trailing_mismatch', [2, 3, 4], [5], []),
        ('rank_too_small', [5], [2, 5], []),
        ('weight_size', [2, 5], [5], [('weight', [4])]),
        ('bias_size', [2, 5], [5], [('weight', [5]), ('bias', [4])]),
    ]
    for name, xs, ns, extra in errs:
        ins = [In('input', vals('float32', xs, 'e' + name))] + [In(n, vals('float32', s, 'e' + name + n)) for n, s in extra]
        names = ['input'] + [n for n, _ in extra]
        F.case('layer_norm/error/' + name, 'layer_norm', {'normalized_shape': ns}, ins,
               layer_norm_fn(names, {'normalized_shape': ns}))
        if 'bias' not in names:
            F.case('rms_norm/error/' + name, 'rms_norm', {'normalized_shape': ns}, ins,
                   rms_norm_fn(names, {'normalized_shape': ns}))


def ids(d, shape, key, rows, repeats=False):
    r = g.rng_for('trids/' + key)
    n = 1
    for s in shape:
        n *= s
    v = [r.randrange(rows // 2 if repeats else rows) for _ in range(n)]
    return T(v, d, shape)


def embedding_fn(args):
    def f(i, w):
        if 'max_norm' in args:
            w = w.clone()  # renormalised in place: the case's recorded weight stays the given one
        return Fn.embedding(i, w, padding_idx=args.get('padding_idx'), max_norm=args.get('max_norm'),
                            norm_type=args.get('norm_type', 2.0), scale_grad_by_freq=args.get('scale_grad_by_freq', False))
    return f


def embeddings(F):
    cases = [
        ('basic', [2, 3], 'int64', [10, 4], {}),
        ('int32_ids', [5], 'int32', [7, 3], {}),
        ('3d_ids', [2, 2, 3], 'int64', [9, 2], {}),
        ('padding', [3, 4], 'int64', [6, 3], {'padding_idx': 0}),
        ('padding_negative', [3, 4], 'int64', [6, 3], {'padding_idx': -1}),
        ('freq', [4, 5], 'int64', [8, 3], {'scale_grad_by_freq': True}),
        ('freq_padding', [4, 5], 'int64', [8, 3], {'scale_grad_by_freq': True, 'padding_idx': 2}),
        ('max_norm', [2, 4], 'int64', [6, 5], {'max_norm': 1.0}),
        ('max_norm_p1', [2, 4], 'int64', [6, 5], {'max_norm': 2.0, 'norm_type': 1.0}),
        ('scalar_id', [], 'int64', [5, 3], {}),
    ]
    for name, ishape, idt, wshape, args in cases:
        cid = 'embedding/' + name
        index = ids(idt, ishape, cid, wshape[0], repeats='freq' in name or 'padding' in name)
        for d in DTYPES:
            F.case('%s/%s' % (cid, d), 'embedding', args, [In('input', index), In('weight', vals(d, wshape, cid))],
                   embedding_fn(args))
        if 'max_norm' not in args:
            F.case(cid + '/grad', 'embedding', args,
                   [In('input', index), In('weight', vals('float64', wshape, cid, True), rg=True)], embedding_fn(args), gout=seeded)
    w = vals('float32', [5, 3], 'errw')
    F.case('embedding/error/float_ids', 'embedding', {}, [In('input', vals('float32', [3], 'errf')), In('weight', w)],
           embedding_fn({}))
    F.case('embedding/error/id_too_large', 'embedding', {}, [In('input', T([1, 5], 'int64', [2])), In('weight', w)],
           embedding_fn({}))
    F.case('embedding/error/id_negative', 'embedding', {}, [In('input', T([-1, 2], 'int64', [2])), In('weight', w)],
           embedding_fn({}))
    for p in (5, -6):
        F.case('embedding/error/padding_%d' % p, 'embedding', {'padding_idx': p},
               [In('input', T([1, 2], 'int64', [2])), In('weight', w)], embedding_fn({'padding_idx': p}))


def sdpa_reference(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """PyTorch 2.x's F.scaled_dot_product_attention (dropout 0) as its documented math."""
    if attn_mask is not None and is_causal:
        raise RuntimeError('attn_mask should not be set when is_causal=True')
    if q.size(-1) != k.size(-1) or k.size(-2) != v.size(-2):
        raise RuntimeError('query, key and value shapes do not fit')
    L, S = q.size(-2), k.size(-2)
    s = 1 / (q.size(-1) ** 0.5) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * s
    if is_causal:
        scores = scores.masked_fill(torch.ones(L, S, dtype=torch.bool).tril().logical_not(), float('-inf'))
    if attn_mask is not None:
        scores = scores.masked_fill(attn_mask.logical_not(), float('-inf')) if attn_mask.dtype == torch.bool \
            else scores + attn_mask
    return torch.softmax(scores, -1) @ v


def sdpa_fn(names, args):
    def f(*ts):
        kw = dict(zip(names, ts))
        return sdpa_reference(kw['query'], kw['key'], kw['value'], kw.get('attn_mask'), bool(args.get('is_causal')),
                              args.get('scale'))
    return f


def bool_mask(shape, key):
    """Every query keeps at least its first key, so no row is fully masked."""
    r = g.rng_for('trmask/' + key)
    v = [r.random() < 0.6 for _ in range(int(torch.tensor(shape).prod()))]
    m = torch.tensor(v).reshape(shape)
    m[..., 0] = True
    return m


def attention(F):
    # (id, q, k, v shapes, mask: None / 'bool' / 'float' and its shape, args)
    cases = [
        ('3d', [2, 3, 4], [2, 5, 4], [2, 5, 6], None, {}),
        ('4d_heads', [2, 2, 3, 4], [2, 2, 3, 4], [2, 2, 3, 4], None, {}),
        ('2d', [4, 3], [5, 3], [5, 2], None, {}),
        ('broadcast_batch', [2, 2, 3, 4], [1, 2, 4, 4], [1, 2, 4, 4], None, {}),
        ('scale', [2, 3, 4], [2, 3, 4], [2, 3, 4], None, {'scale': 0.3}),
        ('causal_square', [2, 4, 4], [2, 4, 4], [2, 4, 3], None, {'is_causal': True}),
        ('causal_l_lt_s', [1, 3, 4], [1, 5, 4], [1, 5, 2], None, {'is_causal': True}),
        ('bool_mask_ls', [2, 3, 4], [2, 5, 4], [2, 5, 4], ('bool', [3, 5]), {}),
        ('bool_mask_per_batch', [2, 2, 3, 4], [2, 2, 4, 4], [2, 2, 4, 4], ('bool', [2, 1, 3, 4]), {}),
        ('float_mask', [2, 3, 4], [2, 5, 4], [2, 5, 4], ('float', [3, 5]), {}),
        ('float_mask_batched', [2, 3, 4], [2, 3, 4], [2, 3, 4], ('float', [2, 3, 3]), {'scale': 1.0}),
    ]
    for name, qs, ks, vs, mask, args in cases:
        cid = 'sdpa/' + name
        names = ['query', 'key', 'value'] + (['attn_mask'] if mask else [])
        for d in DTYPES:
            ins = [In(n, vals(d, sh, cid + n)) for n, sh in zip(names, (qs, ks, vs))]
            if mask:
                ins.append(In('attn_mask', bool_mask(mask[1], cid) if mask[0] == 'bool' else vals(d, mask[1], cid + 'm')))
            F.case('%s/%s' % (cid, d), 'scaled_dot_product_attention', args, ins, sdpa_fn(names, args))
        ins = [In(n, vals('float64', sh, cid + n, True), rg=True) for n, sh in zip(names, (qs, ks, vs))]
        if mask:
            ins.append(In('attn_mask', bool_mask(mask[1], cid)) if mask[0] == 'bool'
                       else In('attn_mask', vals('float64', mask[1], cid + 'm', True), rg=True))
        F.case(cid + '/grad', 'scaled_dot_product_attention', args, ins, sdpa_fn(names, args), gout=seeded)
    view = [In('query', vals('float32', [2, 4, 3], 'sdvq'), 't'), In('key', vals('float32', [2, 4, 3], 'sdvk'), 'step2'),
            In('value', vals('float32', [2, 4, 3], 'sdvv'))]
    F.case('sdpa/views', 'scaled_dot_product_attention', {}, view, sdpa_fn(['query', 'key', 'value'], {}))
    for name, qs, ks, vs in (('features_differ', [2, 3, 4], [2, 3, 5], [2, 3, 5]),
                             ('lengths_differ', [2, 3, 4], [2, 3, 4], [2, 4, 4])):
        F.case('sdpa/error/' + name, 'scaled_dot_product_attention', {},
               [In(n, vals('float32', sh, name + n)) for n, sh in zip(('query', 'key', 'value'), (qs, ks, vs))],
               sdpa_fn(['query', 'key', 'value'], {}))
    F.case('sdpa/error/mask_and_causal', 'scaled_dot_product_attention', {'is_causal': True},
           [In('query', vals('float32', [1, 2, 2], 'mcq')), In('key', vals('float32', [1, 2, 2], 'mck')),
            In('value', vals('float32', [1, 2, 2], 'mcv')), In('attn_mask', bool_mask([2, 2], 'mc'))],
           sdpa_fn(['query', 'key', 'value', 'attn_mask'], {'is_causal': True}))


MHA_PARAMS = ('in_proj_weight', 'q_proj_weight', 'k_proj_weight', 'v_proj_weight', 'in_proj_bias', 'bias_k', 'bias_v',
              'out_proj.weight', 'out_proj.bias')


def mha_fn(names, args):
    """nn.MultiheadAttention(E, heads, ...) in eval mode with the given parameters; returns the
    output and, with need_weights, the weights."""
    def f(*ts):
        kw = dict(zip(names, ts))
        m = torch.nn.MultiheadAttention(args['embed_dim'], args['num_heads'], bias=args.get('bias', True),
                                        add_bias_kv=bool(args.get('add_bias_kv')), add_zero_attn=bool(args.get('add_zero_attn')),
                                        kdim=args.get('kdim'), vdim=args.get('vdim'), batch_first=bool(args.get('batch_first')),
                                        dtype=kw['query'].dtype)
        m.eval()
        for n in MHA_PARAMS:
            if n in kw:
                owner, attr = (m.out_proj, n.split('.')[1]) if n.startswith('out_proj') else (m, n)
                delattr(owner, attr)
                setattr(owner, attr, kw[n])
        need = args.get('need_weights', True)
        out, w = m(kw['query'], kw['key'], kw['value'], key_padding_mask=kw.get('key_padding_mask'), need_weights=need,
                   attn_mask=kw.get('attn_mask'), average_attn_weights=args.get('average_attn_weights', True))
        return (out, w) if need else out
    return f


def mha_inputs(d, cid, args, layout, grad):
    e, heads = args['embed_dim'], args['num_heads']
    kdim, vdim = args.get('kdim', e), args.get('vdim', e)
    L, S, N = layout
    def shape(n, feat):
        if N is None:
            return [n, feat]
        return [N, n, feat] if args.get('batch_first') else [n, N, feat]
    specs = [('query', shape(L, e)), ('key', shape(S, kdim)), ('value', shape(S, vdim))]
    if kdim == e and vdim == e:
        specs.append(('in_proj_weight', [3 * e, e]))
    else:
        specs += [('q_proj_weight', [e, e]), ('k_proj_weight', [e, kdim]), ('v_proj_weight', [e, vdim])]
    if args.get('bias', True):
        specs.append(('in_proj_bias', [3 * e]))
    if args.get('add_bias_kv'):
        specs += [('bias_k', [1, 1, e]), ('bias_v', [1, 1, e])]
    specs.append(('out_proj.weight', [e, e]))
    if args.get('bias', True):
        specs.append(('out_proj.bias', [e]))
    ins = []
    for n, sh in specs:
        t = g.gvals(sh, 'trmha/' + cid + n, -0.8, 0.8) if grad else vals(d, sh, cid + n)
        if not grad and n not in ('query', 'key', 'value'):
            t = t / 4  # keep the scores moderate: softmax stays away from saturation
        ins.append(In(n, t, rg=grad))
    return ins


def multihead(F):
    base = {'embed_dim': 8, 'num_heads': 2}
    # (id, extra args, (L, S, N or None), masks: list of (name, kind, shape))
    cases = [
        ('basic', {}, (3, 4, 2), []),
        ('batch_first', {'batch_first': True}, (3, 4, 2), []),
        ('unbatched', {}, (3, 5, None), []),
        ('self_four_heads', {'num_heads': 4}, (4, 4, 2), []),
        ('kdim_vdim', {'kdim': 6, 'vdim': 4}, (3, 4, 2), []),
        ('no_bias', {'bias': False}, (3, 4, 2), []),
        ('bias_kv', {'add_bias_kv': True}, (3, 4, 2), []),
        ('zero_attn', {'add_zero_attn': True}, (3, 4, 2), []),
        ('bias_kv_zero_attn_masks', {'add_bias_kv': True, 'add_zero_attn': True}, (3, 4, 2),
         [('attn_mask', 'bool', [3, 4]), ('key_padding_mask', 'bool', [2, 4])]),
        ('bool_attn_mask', {}, (3, 4, 2), [('attn_mask', 'bool', [3, 4])]),
        ('float_attn_mask_3d', {}, (3, 4, 2), [('attn_mask', 'float', [4, 3, 4])]),
        ('key_padding', {}, (3, 4, 2), [('key_padding_mask', 'bool', [2, 4])]),
        ('key_padding_float_mask', {'batch_first': True}, (3, 4, 2),
         [('attn_mask', 'float', [3, 4]), ('key_padding_mask', 'bool', [2, 4])]),
        ('per_head_weights', {'average_attn_weights': False}, (3, 4, 2), []),
        ('no_weights', {'need_weights': False}, (3, 4, 2), []),
    ]
    for name, extra, layout, masks in cases:
        args = dict(base, **extra)
        cid = 'mha/' + name
        for d in DTYPES:
            ins = mha_inputs(d, cid, args, layout, False)
            for mn, kind, sh in masks:
                if kind == 'bool':
                    m = bool_mask(sh, cid + mn).logical_not()  # PyTorch's polarity: true = masked; key 0 stays
                    ins.append(In(mn, m))
                else:
                    ins.append(In(mn, vals(d, sh, cid + mn)))
            F.case('%s/%s' % (cid, d), 'multihead_attention', args, ins, mha_fn([i.name for i in ins], args))
        ins = mha_inputs('float64', cid, args, layout, True)
        for mn, kind, sh in masks:
            ins.append(In(mn, bool_mask(sh, cid + mn).logical_not() if kind == 'bool' else vals('float64', sh, cid + mn)))
        fn = mha_fn([i.name for i in ins], args)
        F.case(cid + '/grad', 'multihead_attention', args, ins, lambda *a, fn=fn: first(fn(*a)), gout=seeded)
    for name, masks in (('attn_mask_shape', [('attn_mask', 'bool', [3, 3])]),
                        ('attn_mask_3d_shape', [('attn_mask', 'float', [2, 3, 4])]),
                        ('key_padding_shape', [('key_padding_mask', 'bool', [2, 3])])):
        cid = 'mha/error/' + name
        ins = mha_inputs('float32', cid, base, (3, 4, 2), False)
        for mn, kind, sh in masks:
            ins.append(In(mn, bool_mask(sh, cid) if kind == 'bool' else vals('float32', sh, cid)))
        F.case(cid, 'multihead_attention', base, ins, mha_fn([i.name for i in ins], base))


# ---- the transformer layers, stacks and nn.Transformer -------------------------------------------
#
# Each module is built in eval mode (dropout 0.1 plays no part) and given the case's parameter
# inputs with load_state_dict (strict: the names are the state_dict's, in its order). Its
# parameters stay nn.Parameters that require grad, so PyTorch takes its composite path
# (self_attn, linear1/2, norm1/2/3 as documented) and never 1.13's fused fast paths:
# torch._transformer_encoder_layer_fwd agrees with it to rounding, but the TransformerEncoder's
# nested-tensor path (eval, batch_first, post-norm, even nhead, src_key_padding_mask given,
# under no_grad) returns 0 at the padded positions of every layer's output; it is off as well
# (enable_nested_tensor=False, also for nn.Transformer's encoder).

LAYER_BASE = {'d_model': 8, 'nhead': 2, 'dim_feedforward': 16, 'activation': 'relu', 'norm_first': False,
              'batch_first': False}
MASK_ORDER = {
    'transformer_encoder_layer': ('src_mask', 'src_key_padding_mask'),
    'transformer_encoder': ('src_mask', 'src_key_padding_mask'),
    'transformer_decoder_layer': ('tgt_mask', 'memory_mask', 'tgt_key_padding_mask', 'memory_key_padding_mask'),
    'transformer_decoder': ('tgt_mask', 'memory_mask', 'tgt_key_padding_mask', 'memory_key_padding_mask'),
    'transformer': ('src_mask', 'tgt_mask', 'memory_mask', 'src_key_padding_mask', 'tgt_key_padding_mask',
                    'memory_key_padding_mask'),
}


def transformer_module(op, args, dtype):
    nn = torch.nn
    eps = args.get('layer_norm_eps', 1e-5)
    common = dict(dropout=0.1, activation=args['activation'], layer_norm_eps=eps, batch_first=args['batch_first'],
                  norm_first=args['norm_first'], dtype=dtype)
    e, h, ff = args['d_model'], args['nhead'], args['dim_feedforward']
    if op == 'transformer':
        m = nn.Transformer(e, h, args['num_encoder_layers'], args['num_decoder_layers'], ff, **common)
        m.encoder.enable_nested_tensor = False
    elif op.startswith('transformer_encoder'):
        m = nn.TransformerEncoderLayer(e, h, ff, **common)
        if op == 'transformer_encoder':
            norm = nn.LayerNorm(e, eps=eps, dtype=dtype) if args['final_norm'] else None
            m = nn.TransformerEncoder(m, args['num_layers'], norm, enable_nested_tensor=False)
    else:
        m = nn.TransformerDecoderLayer(e, h, ff, **common)
        if op == 'transformer_decoder':
            norm = nn.LayerNorm(e, eps=eps, dtype=dtype) if args['final_norm'] else None
            m = nn.TransformerDecoder(m, args['num_layers'], norm)
    return m.eval()


def transformer_fn(op, names, args):
    def f(*ts):
        kw = dict(zip(names, ts))
        data = kw['src'] if 'src' in kw else kw['tgt']
        m = transformer_module(op, args, data.dtype)
        m.load_state_dict({n: kw[n] for n in m.state_dict()})
        masks = {n: kw.get(n) for n in MASK_ORDER[op]}
        if op in ('transformer_encoder_layer', 'transformer_encoder'):
            if op == 'transformer_encoder':
                masks['mask'] = masks.pop('src_mask')
            return m(kw['src'], **masks)
        if op == 'transformer':
            return m(kw['src'], kw['tgt'], **masks)
        return m(kw['tgt'], kw['memory'], **masks)
    return f


def seq_shape(n, batch, args):
    e = args['d_model']
    if batch is None:
        return [n, e]
    return [batch, n, e] if args['batch_first'] else [n, batch, e]


def mask_value(d, kind, shape, key):
    """bool: PyTorch's polarity (true = not attended), key 0 always attended, so no query loses
    every key; float: additive values k / 4; causal: generate_square_subsequent_mask (0 and -inf);
    bool_causal: true above the diagonal."""
    if kind == 'bool':
        return bool_mask(shape, key).logical_not()
    if kind == 'float':
        return vals(d, shape, key)
    if kind == 'causal':
        return torch.nn.Transformer.generate_square_subsequent_mask(shape[0]).to(g.DT[d])
    if kind == 'bool_causal':
        return torch.ones(shape, dtype=torch.bool).triu(1)
    raise ValueError(kind)


def transformer_inputs(op, d, cid, args, data, masks, grad, views=None):
    """data: [(name, shape)]; masks: [(name, kind, shape)], put in MASK_ORDER's order; then the
    parameters in state_dict order. Values: data k / 16 (float64 gradient cases: gvals in
    [-1, 1], rg); parameters k / 32, LayerNorm weights 1 + k / 32 (never rg; the same in a case's
    float32, float64 and gradient variants): the attention scores stay moderate and float32's
    rounding stays well inside the comparison's tolerance."""
    views = views or {}
    ins = []
    for n, sh in data:
        t = g.gvals(sh, 'trl/' + cid + n, -1.0, 1.0) if grad else vals(d, sh, cid + n) / 4
        ins.append(In(n, t, views.get(n), rg=grad))
    given = {mn: (kind, sh) for mn, kind, sh in masks}
    for mn in MASK_ORDER[op]:
        if mn in given:
            kind, sh = given[mn]
            ins.append(In(mn, mask_value(d, kind, sh, cid + mn)))
    for n, p in transformer_module(op, args, g.DT[d]).state_dict().items():
        t = vals(d, list(p.shape), cid + n) / 8
        if n.split('.')[-2].startswith('norm') and n.endswith('.weight'):
            t = t + 1  # LayerNorm scales in [0.5, 1.5]: the gradients through a stack of post-norm layers stay O(1)
        ins.append(In(n, t))
    return ins


def transformer_cases(F, op, prefix, cases, data_of):
    for name, extra, layout, masks in cases:
        args = dict(LAYER_BASE, **extra)
        cid = prefix + name
        data = data_of(args, layout)
        for d in DTYPES:
            ins = transformer_inputs(op, d, cid, args, data, masks, False)
            F.case('%s/%s' % (cid, d), op, args, ins, transformer_fn(op, [i.name for i in ins], args))
        ins = transformer_inputs(op, 'float64', cid, args, data, masks, True)
        F.case(cid + '/grad', op, args, ins, transformer_fn(op, [i.name for i in ins], args), gout=seeded)


def encoder_data(args, layout):
    L, N = layout
    return [('src', seq_shape(L, N, args))]


def decoder_data(args, layout):
    L, S, N = layout
    return [('tgt', seq_shape(L, N, args)), ('memory', seq_shape(S, N, args))]


def transformer_layers(F):
    gelu, nf, bf = {'activation': 'gelu'}, {'norm_first': True}, {'batch_first': True}
    # (id, args beyond LAYER_BASE, (L, N or None), masks: (name, kind, shape))
    enc = [
        ('basic', {}, (5, 2), []),
        ('gelu', gelu, (3, 2), []),
        ('norm_first', nf, (5, 2), []),
        ('batch_first', bf, (3, 2), []),
        ('batch_first_norm_first_gelu', dict(bf, **dict(nf, **gelu)), (5, 2), [('src_key_padding_mask', 'bool', [2, 5])]),
        ('unbatched', {}, (5, None), [('src_mask', 'bool', [5, 5]), ('src_key_padding_mask', 'bool', [5])]),
        ('bool_src_mask', {}, (5, 2), [('src_mask', 'bool', [5, 5])]),
        ('float_src_mask', dict(nf, **gelu), (5, 2), [('src_mask', 'float', [5, 5])]),
        ('causal', bf, (5, 2), [('src_mask', 'causal', [5, 5])]),
        ('key_padding', {}, (5, 2), [('src_key_padding_mask', 'bool', [2, 5])]),
        ('bool_mask_key_padding', bf, (3, 2), [('src_mask', 'bool', [3, 3]), ('src_key_padding_mask', 'bool', [2, 3])]),
        ('float_mask_key_padding', nf, (5, 2), [('src_mask', 'float', [5, 5]), ('src_key_padding_mask', 'bool', [2, 5])]),
        ('float_mask_3d', {}, (3, 2), [('src_mask', 'float', [4, 3, 3])]),  # [N * nhead, L, L]
        ('eps_four_heads', {'layer_norm_eps': 1e-3, 'nhead': 4}, (3, 2), []),
    ]
    transformer_cases(F, 'transformer_encoder_layer', 'transformer_encoder_layer/', enc, encoder_data)
    # (id, args, (L, S, N or None), masks)
    dec = [
        ('basic', {}, (3, 4, 2), []),
        ('gelu_norm_first', dict(gelu, **nf), (5, 4, 2), []),
        ('batch_first', bf, (3, 4, 2), []),
        ('unbatched', {}, (3, 4, None), [('tgt_mask', 'causal', [3, 3]), ('memory_key_padding_mask', 'bool', [4])]),
        ('causal', {}, (5, 4, 2), [('tgt_mask', 'causal', [5, 5])]),
        ('bool_masks', {}, (3, 4, 2), [('tgt_mask', 'bool', [3, 3]), ('memory_mask', 'bool', [3, 4])]),
        ('float_masks', dict(nf, **bf), (3, 4, 2), [('tgt_mask', 'float', [3, 3]), ('memory_mask', 'float', [3, 4])]),
        ('key_padding', dict(bf, **gelu), (5, 4, 2),
         [('tgt_key_padding_mask', 'bool', [2, 5]), ('memory_key_padding_mask', 'bool', [2, 4])]),
        ('all_masks', {}, (3, 4, 2), [('tgt_mask', 'bool_causal', [3, 3]), ('memory_mask', 'float', [3, 4]),
                                      ('tgt_key_padding_mask', 'bool', [2, 3]), ('memory_key_padding_mask', 'bool', [2, 4])]),
        ('eps_norm_first', dict(nf, layer_norm_eps=1e-3), (3, 4, 2), [('memory_key_padding_mask', 'bool', [2, 4])]),
    ]
    transformer_cases(F, 'transformer_decoder_layer', 'transformer_decoder_layer/', dec, decoder_data)
    stack = [
        ('two_layers_norm', {'num_layers': 2, 'final_norm': True}, None),
        ('two_layers_batch_first_gelu', dict(bf, **dict(gelu, num_layers=2, final_norm=False)), 'padding'),
        ('three_layers_norm_first', dict(nf, num_layers=3, final_norm=True), 'causal'),
        ('one_layer_masks', {'num_layers': 1, 'final_norm': False}, 'bool'),
    ]
    enc_masks = {'padding': [('src_key_padding_mask', 'bool', [2, 3])], 'causal': [('src_mask', 'causal', [3, 3])],
                 'bool': [('src_mask', 'bool', [5, 5]), ('src_key_padding_mask', 'bool', [2, 5])]}
    dec_masks = {'padding': [('tgt_mask', 'causal', [3, 3]), ('memory_key_padding_mask', 'bool', [2, 4])],
                 'causal': [('tgt_mask', 'causal', [3, 3])],
                 'bool': [('tgt_mask', 'bool', [5, 5]), ('memory_mask', 'float', [5, 4]), ('tgt_key_padding_mask', 'bool', [2, 5])]}
    transformer_cases(F, 'transformer_encoder', 'transformer_encoder/',
                      [(n, a, (5 if m == 'bool' else 3, 2), enc_masks.get(m, [])) for n, a, m in stack], encoder_data)
    transformer_cases(F, 'transformer_decoder', 'transformer_decoder/',
                      [(n, a, (5 if m == 'bool' else 3, 4, 2), dec_masks.get(m, [])) for n, a, m in stack], decoder_data)

    # nn.Transformer: one encoder and one decoder layer, its final norms always there.
    def full_data(args, S, L, N):
        return [('src', seq_shape(S, N, args)), ('tgt', seq_shape(L, N, args))]
    targs = dict(LAYER_BASE, num_encoder_layers=1, num_decoder_layers=1)
    ins = transformer_inputs('transformer', 'float32', 'transformer/basic', targs, full_data(targs, 4, 3, 2), [], False)
    F.case('transformer/basic/float32', 'transformer', targs, ins, transformer_fn('transformer', [i.name for i in ins], targs))
    targs = dict(LAYER_BASE, num_encoder_layers=1, num_decoder_layers=1, activation='gelu', norm_first=True, batch_first=True)
    masks = [('src_mask', 'bool', [4, 4]), ('tgt_mask', 'causal', [3, 3]), ('memory_mask', 'float', [3, 4]),
             ('src_key_padding_mask', 'bool', [2, 4]), ('tgt_key_padding_mask', 'bool', [2, 3]),
             ('memory_key_padding_mask', 'bool', [2, 4])]
    for grad in (False, True):
        ins = transformer_inputs('transformer', 'float64', 'transformer/masks', targs, full_data(targs, 4, 3, 2), masks, grad)
        F.case('transformer/masks/' + ('grad' if grad else 'float64'), 'transformer', targs, ins,
               transformer_fn('transformer', [i.name for i in ins], targs), gout=seeded if grad else None)

    for sz in (1, 2, 5):
        F.case('generate_square_subsequent_mask/%d' % sz, 'generate_square_subsequent_mask', {'sz': sz}, [],
               lambda sz=sz: torch.nn.Transformer.generate_square_subsequent_mask(sz))

    # Strided inputs: src and memory as views.
    op = 'transformer_encoder_layer'
    ins = transformer_inputs(op, 'float32', op + '/view_t', LAYER_BASE, encoder_data(LAYER_BASE, (5, 2)),
                             [('src_key_padding_mask', 'bool', [2, 5])], False, {'src': 't'})
    F.case(op + '/view_t', op, LAYER_BASE, ins, transformer_fn(op, [i.name for i in ins], LAYER_BASE))
    op = 'transformer_decoder_layer'
    ins = transformer_inputs(op, 'float32', op + '/view_step2', LAYER_BASE, decoder_data(LAYER_BASE, (3, 4, 2)), [], False,
                             {'tgt': 't', 'memory': 'step2'})
    F.case(op + '/view_step2', op, LAYER_BASE, ins, transformer_fn(op, [i.name for i in ins], LAYER_BASE))

    # Errors.
    errs = [
        ('transformer_encoder_layer', 'src_features', {}, [('src', [3, 2, 6])], []),
        ('transformer_encoder_layer', 'key_padding_shape', {}, [('src', [3, 2, 8])], [('src_key_padding_mask', 'bool', [2, 4])]),
        ('transformer_encoder', 'src_mask_shape', {'num_layers': 2, 'final_norm': True}, [('src', [3, 2, 8])],
         [('src_mask', 'bool', [5, 5])]),
        ('transformer_decoder_layer', 'memory_features', {}, [('tgt', [3, 2, 8]), ('memory', [4, 2, 6])], []),
        ('transformer_decoder_layer', 'memory_mask_shape', {}, [('tgt', [3, 2, 8]), ('memory', [4, 2, 8])],
         [('memory_mask', 'float', [3, 3])]),
        ('transformer', 'batch_mismatch', {'num_encoder_layers': 1, 'num_decoder_layers': 1},
         [('src', [4, 2, 8]), ('tgt', [3, 3, 8])], []),
        ('transformer', 'tgt_features', {'num_encoder_layers': 1, 'num_decoder_layers': 1},
         [('src', [4, 2, 8]), ('tgt', [3, 2, 6])], []),
    ]
    for op, name, extra, data, masks in errs:
        args = dict(LAYER_BASE, **extra)
        cid = '%s/error/%s' % (op, name)
        ins = transformer_inputs(op, 'float32', cid, args, data, masks, False)
        F.case(cid, op, args, ins, transformer_fn(op, [i.name for i in ins], args))


def first(r):
    return r[0] if isinstance(r, (tuple, list)) else r


def generate():
    F = g.Family('transformer')
    norms(F)
    embeddings(F)
    attention(F)
    multihead(F)
    transformer_layers(F)
    return F
