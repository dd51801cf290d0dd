"""Golden family `lr_scheduler`: the learning rate of every group after construction and after
each of 100 steps (float64 [101, groups]) for every scheduler of torch.optim.lr_scheduler that
Locus has, with several argument sets and one or two groups of different rates; OneCycleLR's
momentum (SGD's momentum, Adam's beta1) as a second output; the errors PyTorch raises for bad
arguments. A case's arguments: `sched` and its keyword arguments; `lr0`, `lr1` the groups'
rates; `opt` the optimizer (sgd with momentum 0.9, or adam); SequentialLR's schedulers as
`s<k>` with their arguments prefixed `s<k>_`; LambdaLR's functions as `lambda0`, `lambda1`
(`pow:<base>`: base ** epoch; `step:<n>:<gamma>`: gamma ** (epoch // n))."""

import torch

import generate
from generate import Family, In, T

S = torch.optim.lr_scheduler
STEPS = 100


def lam(spec):
    kind, *a = spec.split(':')
    if kind == 'pow':
        b = float(a[0])
        return lambda e: b ** e
    n, g = int(a[0]), float(a[1])
    return lambda e: g ** (e // n)


def build(opt, name, kw, prefix, args):
    """The scheduler `name` with keyword arguments kw."""
    if name == 'sequential':
        subs = []
        k = 0
        while ('s%d' % k) in args:
            sub = 's%d' % k
            sub_kw = {key[len(sub) + 1:]: v for key, v in args.items() if key.startswith(sub + '_')}
            subs.append(build(opt, args[sub], sub_kw, sub, args))
            k += 1
        return S.SequentialLR(opt, subs, milestones=list(kw['milestones']))
    if name == 'lambda':
        fns = [lam(args['lambda0'])] if 'lambda1' not in args else [lam(args['lambda0']), lam(args['lambda1'])]
        return S.LambdaLR(opt, fns if len(fns) > 1 else fns[0])
    cls = {'step': S.StepLR, 'multistep': S.MultiStepLR, 'exponential': S.ExponentialLR,
           'cosine': S.CosineAnnealingLR, 'warm_restarts': S.CosineAnnealingWarmRestarts,
           'linear': S.LinearLR, 'constant': S.ConstantLR, 'one_cycle': S.OneCycleLR,
           'plateau': S.ReduceLROnPlateau}[name]
    kw = {k: (list(v) if isinstance(v, tuple) else v) for k, v in kw.items()}
    return cls(opt, **kw)


def run(args):
    def f(*ts):
        lrs = [args['lr0']] + ([args['lr1']] if 'lr1' in args else [])
        params = [torch.zeros(1, requires_grad=True) for _ in lrs]
        groups = [dict(params=[p], lr=lr) for p, lr in zip(params, lrs)]
        opt = torch.optim.Adam(groups) if args.get('opt') == 'adam' else torch.optim.SGD(groups, lr=lrs[0], momentum=0.9)
        kw = {k: v for k, v in args.items() if k not in ('sched', 'lr0', 'lr1', 'opt', 'lambda0', 'lambda1')
              and not (k.startswith('s') and k[1:2].isdigit())}
        sched = build(opt, args['sched'], kw, '', args)
        key = 'betas' if args.get('opt') == 'adam' else 'momentum'

        def momentum(g):
            return g[key][0] if key == 'betas' else g[key]
        seq = [[g['lr'] for g in opt.param_groups]]
        mom = [[momentum(g) for g in opt.param_groups]]
        for t in range(STEPS):
            opt.step()
            if args['sched'] == 'plateau':
                sched.step(ts[0][t].item())
            else:
                sched.step()
            seq.append([g['lr'] for g in opt.param_groups])
            mom.append([momentum(g) for g in opt.param_groups])
        outs = [torch.tensor(seq, dtype=torch.float64)]
        if args['sched'] == 'one_cycle' and args.get('cycle_momentum', True):
            outs.append(torch.tensor(mom, dtype=torch.float64))
        return tuple(outs)
    return f


def metrics():
    """A loss that falls, then plateaus with small wiggles, then falls again."""
    vals = [10.0 - 0.1 * min(t, 30) + 0.01 * ((t * 7) % 5) + (-0.5 if t > 70 else 0.0) for t in range(STEPS)]
    return [In('metrics', T(vals, 'float64', [STEPS]))]


TWO = dict(lr0=0.1, lr1=0.01)
CASES = [
    ('step/0', dict(sched='step', step_size=30, lr0=0.1)),
    ('step/1', dict(sched='step', step_size=7, gamma=0.5, **TWO)),
    ('multistep/0', dict(sched='multistep', milestones=(30, 80), lr0=0.1)),
    ('multistep/1', dict(sched='multistep', milestones=(10, 10, 50, 20), gamma=0.3, **TWO)),
    ('exponential/0', dict(sched='exponential', gamma=0.95, lr0=0.1)),
    ('exponential/1', dict(sched='exponential', gamma=0.9, **TWO)),
    ('cosine/0', dict(sched='cosine', T_max=100, lr0=0.1)),
    ('cosine/1', dict(sched='cosine', T_max=30, eta_min=0.001, **TWO)),
    ('cosine/2', dict(sched='cosine', T_max=7, **TWO)),
    ('warm_restarts/0', dict(sched='warm_restarts', T_0=10, lr0=0.1)),
    ('warm_restarts/1', dict(sched='warm_restarts', T_0=5, T_mult=2, eta_min=0.0005, **TWO)),
    ('linear/0', dict(sched='linear', lr0=0.1)),
    ('linear/1', dict(sched='linear', start_factor=0.25, end_factor=0.75, total_iters=40, **TWO)),
    ('linear/2', dict(sched='linear', start_factor=1.0, end_factor=0.1, total_iters=100, lr0=0.05)),
    ('constant/0', dict(sched='constant', lr0=0.1)),
    ('constant/1', dict(sched='constant', factor=0.5, total_iters=20, **TWO)),
    ('lambda/0', dict(sched='lambda', lambda0='pow:0.97', lr0=0.1)),
    ('lambda/1', dict(sched='lambda', lambda0='pow:0.9', lambda1='step:10:0.5', **TWO)),
    ('one_cycle/0', dict(sched='one_cycle', max_lr=0.1, total_steps=100, lr0=0.1)),
    ('one_cycle/1', dict(sched='one_cycle', max_lr=(0.1, 0.05), total_steps=100, anneal_strategy='linear', **TWO)),
    ('one_cycle/2', dict(sched='one_cycle', max_lr=0.2, epochs=10, steps_per_epoch=10, three_phase=True,
                         pct_start=0.25, div_factor=10.0, final_div_factor=100.0, **TWO)),
    ('one_cycle/3', dict(sched='one_cycle', max_lr=0.01, total_steps=120, opt='adam', base_momentum=0.8,
                         max_momentum=0.9, lr0=0.001)),
    ('one_cycle/4', dict(sched='one_cycle', max_lr=0.1, total_steps=100, cycle_momentum=False, lr0=0.1)),
    ('sequential/0', dict(sched='sequential', s0='linear', s0_start_factor=0.1, s0_total_iters=5,
                          s1='cosine', s1_T_max=95, milestones=(5,), lr0=0.1)),
    ('sequential/1', dict(sched='sequential', s0='constant', s0_factor=0.5, s0_total_iters=3,
                          s1='exponential', s1_gamma=0.95, milestones=(3,), **TWO)),
    ('sequential/2', dict(sched='sequential', s0='linear', s0_start_factor=0.5, s0_total_iters=10,
                          s1='step', s1_step_size=10, s1_gamma=0.5, s2='exponential', s2_gamma=0.98,
                          milestones=(10, 40), **TWO)),
    ('plateau/0', dict(sched='plateau', lr0=0.1)),
    ('plateau/1', dict(sched='plateau', mode='max', factor=0.5, patience=3, threshold=0.01, lr0=0.1)),
    ('plateau/2', dict(sched='plateau', factor=0.5, patience=2, threshold=0.05, threshold_mode='abs', cooldown=3,
                       min_lr=(0.02, 0.005), **TWO)),
    ('plateau/3', dict(sched='plateau', factor=0.2, patience=0, min_lr=0.004, eps=0.001, **TWO)),
]

ERRORS = [
    dict(sched='constant', factor=1.5, lr0=0.1), dict(sched='constant', factor=-0.5, lr0=0.1),
    dict(sched='linear', start_factor=1.5, lr0=0.1), dict(sched='linear', end_factor=-0.1, lr0=0.1),
    dict(sched='warm_restarts', T_0=0, lr0=0.1), dict(sched='warm_restarts', T_0=5, T_mult=0, lr0=0.1),
    dict(sched='lambda', lambda0='pow:0.9', lambda1='pow:0.8', lr0=0.1),
    dict(sched='one_cycle', max_lr=0.1, lr0=0.1), dict(sched='one_cycle', max_lr=0.1, total_steps=-1, lr0=0.1),
    dict(sched='one_cycle', max_lr=0.1, epochs=0, steps_per_epoch=10, lr0=0.1),
    dict(sched='one_cycle', max_lr=0.1, epochs=10, steps_per_epoch=-2, lr0=0.1),
    dict(sched='one_cycle', max_lr=0.1, total_steps=100, pct_start=1.5, lr0=0.1),
    dict(sched='one_cycle', max_lr=0.1, total_steps=100, anneal_strategy='cosine', lr0=0.1),
    dict(sched='one_cycle', max_lr=(0.1, 0.2, 0.3), total_steps=100, **TWO),
    dict(sched='one_cycle', max_lr=0.1, total_steps=50, lr0=0.1),
    dict(sched='sequential', s0='linear', s1='exponential', s1_gamma=0.9, milestones=(5, 10), lr0=0.1),
    dict(sched='plateau', factor=1.0, lr0=0.1), dict(sched='plateau', mode='avg', lr0=0.1),
    dict(sched='plateau', threshold_mode='pct', lr0=0.1), dict(sched='plateau', min_lr=(0.1, 0.2, 0.3), **TWO),
]


def generate():
    F = Family('lr_scheduler')
    for cid, args in CASES:
        ins = metrics() if args['sched'] == 'plateau' else []
        F.case('lr_scheduler/' + cid, 'lr_schedule', args, ins, run(args))
    for k, args in enumerate(ERRORS):
        ins = metrics() if args['sched'] == 'plateau' else []
        F.case('lr_scheduler/error/%d' % k, 'lr_schedule', args, ins, run(args))
    return F
