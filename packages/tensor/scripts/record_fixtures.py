#!/usr/bin/python3
"""Records PyTorch reference values for @dtlab/tensor's parity tests.

Writes two JSON files into packages/tensor/fixtures/:

  expressions.json  composite expressions over every op the package has, and
                    edge cases on fixed inputs (ties, kinks, 0 ** 0, saturation,
                    huge logits): the inputs, the forward output, and the
                    gradient of each input (of sum(output * weight) for a
                    non-scalar output, with the weight recorded too), in
                    float64 and float32.
  optim.json        10-step trajectories of SGD, Adam and AdamW on a small MLP
                    (4-8-3, ReLU, cross-entropy on a fixed batch of 6): the
                    initial parameters, the batch, each step's loss and the
                    parameters after it, and the optimizer state at the end.

Everything a test needs is written into the JSON, inputs included, so the
tests never run torch and never depend on torch's random number generator.

Run it with Debian's python, which has torch (the pyenv python3 on PATH does not):

    /usr/bin/python3 packages/tensor/scripts/record_fixtures.py

The output is deterministic: a fixed seed, one CPU thread, and inputs drawn
in a fixed order.
"""
import json
import math
import os
import struct
import sys

import torch
import torch.nn.functional as F

SEED = 0
HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(os.path.dirname(HERE), 'fixtures')
GENERATED_BY = 'packages/tensor/scripts/record_fixtures.py'

# Inputs whose result depends on a branch (relu's sign, which element is the
# max) are redrawn until every branch is at least this far from switching, so
# that float32 rounding cannot take the other branch in dtlab.
MARGIN = 1e-3
# The same for the ReLU pre-activations along an optimizer trajectory, which
# cannot be redrawn one by one; float32 runs drift apart by less than 1e-6 in 10 steps.
TRAJECTORY_MARGIN = 1e-4


# ---------------------------------------------------------------- formatting

def f32(x):
    """x rounded to the nearest float32."""
    return struct.unpack('f', struct.pack('f', x))[0]


def fmt_number(x, dtype):
    """The shortest decimal that reads back as exactly x in `dtype`."""
    if not math.isfinite(x):
        raise ValueError(f'non-finite value {x} cannot be written to JSON')
    if dtype == 'float64':
        return repr(float(x))
    for digits in range(1, 10):
        s = '%.*g' % (digits, x)
        if f32(float(s)) == x:
            return s
    raise AssertionError(f'BUG: no float32 decimal found for {x!r}')


class Numbers:
    """A flat list of numbers written on one line, each in its dtype's shortest form."""

    def __init__(self, values, dtype):
        self.values = [float(v) for v in values]
        self.dtype = dtype

    def to_json(self):
        return '[' + ','.join(fmt_number(v, self.dtype) for v in self.values) + ']'


class Num:
    """One number written in its dtype's shortest form."""

    def __init__(self, value, dtype):
        self.value = float(value)
        self.dtype = dtype

    def to_json(self):
        return fmt_number(self.value, self.dtype)


def is_flat(obj):
    return isinstance(obj, (Numbers, Num)) or not isinstance(obj, (dict, list))


def is_one_line(obj):
    """A flat list, or a dict of flat values holding at most one number array."""
    if is_flat(obj):
        return True
    if isinstance(obj, list):
        return all(not isinstance(v, (dict, list, Numbers)) for v in obj)
    values = list(obj.values())
    arrays = sum(isinstance(v, Numbers) for v in values)
    return all(is_flat(v) or (isinstance(v, list) and is_one_line(v)) for v in values) and arrays <= 1


def dump(obj, indent=0):
    """JSON with nested structure indented and every number array on one line."""
    pad = '  ' * (indent + 1)
    end = '  ' * indent
    if isinstance(obj, (Numbers, Num)):
        return obj.to_json()
    if isinstance(obj, dict):
        if is_one_line(obj) and indent > 0:
            return '{' + ', '.join(f'{json.dumps(k)}: {dump(v, indent + 1)}' for k, v in obj.items()) + '}'
        items = [f'{pad}{json.dumps(k)}: {dump(v, indent + 1)}' for k, v in obj.items()]
        return '{\n' + ',\n'.join(items) + '\n' + end + '}'
    if isinstance(obj, list):
        if is_one_line(obj):
            return '[' + ','.join(dump(v, indent + 1) for v in obj) + ']'
        return '[\n' + ',\n'.join(pad + dump(v, indent + 1) for v in obj) + '\n' + end + ']'
    if isinstance(obj, float):
        return fmt_number(obj, 'float64')
    return json.dumps(obj)


def dtype_name(t):
    return {torch.float32: 'float32', torch.float64: 'float64', torch.int64: 'int64'}[t.dtype]


def tensor_json(t):
    """{shape, values} of a tensor, values flat in row-major order."""
    t = t.detach()
    if t.dtype == torch.int64:
        values = [int(v) for v in t.reshape(-1).tolist()]
    else:
        values = Numbers(t.reshape(-1).tolist(), dtype_name(t))
    return {'shape': list(t.shape), 'values': values}


def write(name, payload):
    path = os.path.join(OUT_DIR, name)
    with open(path, 'w') as f:
        f.write(dump(payload) + '\n')
    print(f'wrote {path} ({os.path.getsize(path)} bytes)')


# ---------------------------------------------------------------- expressions

class In:
    """An input of an expression: `randn`, `pos` (uniform in [0.5, 2)), `labels` (class indices below `classes`)
    or `fixed` (the given `values`, for edge cases)."""

    def __init__(self, name, shape, kind='randn', grad=True, classes=0, values=None):
        self.name, self.shape, self.kind, self.grad, self.classes, self.values = name, shape, kind, grad, classes, values

    def draw(self):
        if self.kind == 'fixed':
            return torch.tensor(self.values, dtype=torch.int64 if self.classes else torch.float64).reshape(self.shape)
        if self.kind == 'labels':
            return torch.randint(0, self.classes, self.shape)
        if self.kind == 'pos':
            return torch.rand(self.shape, dtype=torch.float64) * 1.5 + 0.5
        return torch.randn(self.shape, dtype=torch.float64)


def relu_margin(z):
    """How far the pre-activations z are from relu's kink at 0."""
    return z.abs().min().item()


def max_margin(x, dim=None):
    """Gap between the largest and second-largest element along dim (all elements when None)."""
    if dim is None:
        x, dim = x.reshape(-1), 0
    top = x.topk(2, dim=dim).values
    return (top.select(dim, 0) - top.select(dim, 1)).min().item()


# Each case: name, description (torch notation), inputs, the expression, and
# optionally a guard returning the distance of the inputs from a branch switch.
CASES = [
    dict(name='arith_broadcast', description='(a + b) * c - a / d',
         inputs=[In('a', (2, 3)), In('b', (3,)), In('c', (2, 1)), In('d', (1, 3), 'pos')],
         fn=lambda a, b, c, d: (a + b) * c - a / d),
    dict(name='scalar_operands', description='(x * 3 - 1) / 2 + (-x).pow(2) - x.pow(3) * 0.25',
         inputs=[In('x', (3, 4))],
         fn=lambda x: (x * 3 - 1) / 2 + (-x).pow(2) - x.pow(3) * 0.25),
    dict(name='pow_tensor_exponent', description='p.pow(e) + p.pow(2.5)  (e broadcast over rows)',
         inputs=[In('p', (2, 3), 'pos'), In('e', (3,))],
         fn=lambda p, e: p.pow(e) + p.pow(2.5)),
    dict(name='unary_chain', description='exp(tanh(x)) * sigmoid(x) + log(sqrt(p))',
         inputs=[In('x', (2, 4)), In('p', (2, 4), 'pos')],
         fn=lambda x, p: torch.exp(torch.tanh(x)) * torch.sigmoid(x) + torch.log(torch.sqrt(p))),
    dict(name='linear_relu', description='relu(x @ w.T + b)',
         inputs=[In('x', (4, 3)), In('w', (5, 3)), In('b', (5,))],
         fn=lambda x, w, b: torch.relu(x @ w.T + b),
         guard=lambda x, w, b: relu_margin(x @ w.T + b)),
    dict(name='sum_mean_dims',
         description='x.sum(dim=[0, 2], keepdim=True) * x.mean(dim=-1, keepdim=True) + x.mean(dim=0).sum(dim=1, keepdim=True) - x.mean()',
         inputs=[In('x', (2, 3, 4))],
         fn=lambda x: x.sum(dim=[0, 2], keepdim=True) * x.mean(dim=-1, keepdim=True) + x.mean(dim=0).sum(dim=1, keepdim=True) - x.mean()),
    dict(name='max_dims',
         description='x.max(dim=1, keepdim=True).values * x.max(dim=-1, keepdim=True).values + x.max(dim=0).values + x.max()',
         inputs=[In('x', (2, 3, 4))],
         fn=lambda x: x.max(dim=1, keepdim=True).values * x.max(dim=-1, keepdim=True).values + x.max(dim=0).values + x.max(),
         guard=lambda x: min(max_margin(x, 0), max_margin(x, 1), max_margin(x, 2), max_margin(x))),
    dict(name='matmul_vectors', description='(a @ v) * u + (u @ a) @ v  (2-D·1-D, 1-D·2-D, 1-D·1-D)',
         inputs=[In('a', (3, 4)), In('u', (3,)), In('v', (4,))],
         fn=lambda a, u, v: (a @ v) * u + (u @ a) @ v),
    dict(name='matmul_batched_broadcast', description='(m @ x) @ (y + w)  (2-D·3-D, 3-D·3-D)',
         inputs=[In('m', (3, 3)), In('x', (2, 3, 4)), In('y', (2, 4, 5)), In('w', (4, 5))],
         fn=lambda m, x, y, w: (m @ x) @ (y + w)),
    dict(name='matmul_3d_2d_1d', description='(x @ w).sum(dim=-1) * (x @ v) + (u @ x).sum(dim=-1, keepdim=True)  (3-D·2-D, 3-D·1-D, 1-D·3-D)',
         inputs=[In('x', (2, 3, 4)), In('w', (4, 5)), In('v', (4,)), In('u', (3,))],
         fn=lambda x, w, v, u: (x @ w).sum(dim=-1) * (x @ v) + (u @ x).sum(dim=-1, keepdim=True)),
    dict(name='movement_views',
         description='x.permute(2, 0, 1)[1:3].transpose(1, 2).reshape(2, 6) * tanh(x.flatten(1)[:, 2:8]) + x.flatten()[-12:].reshape(2, 6)',
         inputs=[In('x', (2, 3, 4))],
         fn=lambda x: x.permute(2, 0, 1)[1:3].transpose(1, 2).reshape(2, 6) * torch.tanh(x.flatten(1)[:, 2:8]) + x.flatten()[-12:].reshape(2, 6)),
    dict(name='expand_cat',
         description='a = v.expand(-1, 4) * y + s.expand(3, 4); b = cat([a, z], dim=0); cat([b, exp(b[:, 0:1])], dim=1)',
         inputs=[In('v', (3, 1)), In('y', (3, 4)), In('s', (4,)), In('z', (2, 4))],
         fn=lambda v, y, s, z: (lambda b: torch.cat([b, torch.exp(b[:, 0:1])], dim=1))(
             torch.cat([v.expand(-1, 4) * y + s.expand(3, 4), z], dim=0))),
    dict(name='broadcast_3d', description='(a * b + c) / e - a  (e does not require grad)',
         inputs=[In('a', (2, 1, 4)), In('b', (3, 1)), In('c', (4,)), In('e', (1, 3, 1), 'pos', grad=False)],
         fn=lambda a, b, c, e: (a * b + c) / e - a),
    dict(name='layer_norm',
         description='d = x - x.mean(-1, keepdim=True); d / sqrt(d.pow(2).mean(-1, keepdim=True) + 1e-5) * g + b',
         inputs=[In('x', (3, 5)), In('g', (5,)), In('b', (5,))],
         fn=lambda x, g, b: (lambda d: d / torch.sqrt(d.pow(2).mean(-1, keepdim=True) + 1e-5) * g + b)(x - x.mean(-1, keepdim=True))),
    dict(name='softmax_log_softmax', description='log_softmax(x, dim=-1) + softmax(x, dim=1)',
         inputs=[In('x', (2, 3, 4))],
         fn=lambda x: F.log_softmax(x, dim=-1) + F.softmax(x, dim=1)),
    dict(name='attention', description='softmax(q @ k.transpose(-2, -1) / 2, dim=-1) @ v',
         inputs=[In('q', (2, 3, 4)), In('k', (2, 3, 4)), In('v', (2, 3, 4))],
         fn=lambda q, k, v: F.softmax(q @ k.transpose(-2, -1) / 2, dim=-1) @ v),
    dict(name='cross_entropy_linear', description='cross_entropy(x @ w.T + b, t)  (t: class indices, mean over the batch)',
         inputs=[In('x', (6, 4)), In('w', (3, 4)), In('b', (3,)), In('t', (6,), 'labels', grad=False, classes=3)],
         fn=lambda x, w, b, t: F.cross_entropy(x @ w.T + b, t)),
    dict(name='mse_loss', description='mse_loss(tanh(x @ w), y)  (y requires grad too)',
         inputs=[In('x', (5, 3)), In('w', (3, 2)), In('y', (5, 2))],
         fn=lambda x, w, y: F.mse_loss(torch.tanh(x @ w), y)),
    dict(name='mlp_cross_entropy', description='cross_entropy(relu(x @ w1.T + b1) @ w2.T + b2, t)',
         inputs=[In('x', (6, 4)), In('w1', (8, 4)), In('b1', (8,)), In('w2', (3, 8)), In('b2', (3,)),
                 In('t', (6,), 'labels', grad=False, classes=3)],
         fn=lambda x, w1, b1, w2, b2, t: F.cross_entropy(torch.relu(x @ w1.T + b1) @ w2.T + b2, t),
         guard=lambda x, w1, b1, w2, b2, t: relu_margin(x @ w1.T + b1)),

    # Edge cases, on fixed inputs: where torch defines a value or a gradient at a
    # boundary (ties, kinks, 0 ** 0, saturation, huge logits), dtlab must agree.
    dict(name='edge_max_ties', description='x.max() + x.max(dim=1, keepdim=True).values + x.max(dim=0).values  (tied maxima: the full max shares the gradient evenly, max(dim) gives it to the first)',
         inputs=[In('x', (3, 4), 'fixed', values=[1, 5, 3, 5, 2, 2, 0, 2, 5, -1, 5, 5])],
         fn=lambda x: x.max() + x.max(dim=1, keepdim=True).values + x.max(dim=0).values),
    dict(name='edge_relu_at_zero', description='relu(x) * x  (relu\'s gradient at 0 and -0 is 0)',
         inputs=[In('x', (6,), 'fixed', values=[-1.5, -0.0, 0.0, 0.25, 2.0, -3.0])],
         fn=lambda x: torch.relu(x) * x),
    dict(name='edge_pow_zero', description='x.pow(e) + x.pow(0) * 3 + x.pow(2)  (0 ** 0 = 1 with zero gradients; d/de of 0 ** e is 0 for e >= 0)',
         inputs=[In('x', (5,), 'fixed', values=[0.0, 0.0, 0.0, 1.5, 2.0]), In('e', (5,), 'fixed', values=[2.0, 0.0, 1.0, 3.0, -1.0])],
         fn=lambda x, e: x.pow(e) + x.pow(0) * 3 + x.pow(2)),
    dict(name='edge_saturation', description='sigmoid(x) + tanh(x)  (|x| up to 800: no overflow, zero gradients where saturated)',
         inputs=[In('x', (8,), 'fixed', values=[-800.0, -40.0, -20.0, -1e-8, 0.0, 20.0, 40.0, 800.0])],
         fn=lambda x: torch.sigmoid(x) + torch.tanh(x)),
    dict(name='edge_large_logits', description='log_softmax(x, dim=1) + cross_entropy(x, t)  (logits up to ±1000)',
         inputs=[In('x', (3, 3), 'fixed', values=[1000.0, 0.0, -1000.0, -50.0, 30.0, 30.5, 0.0, 0.0, 0.0]),
                 In('t', (3,), 'fixed', grad=False, classes=3, values=[2, 1, 0])],
         fn=lambda x, t: F.log_softmax(x, dim=1) + F.cross_entropy(x, t)),
]


def draw_inputs(case):
    """Float64 inputs (and int64 labels) for `case`, redrawn until its guard passes."""
    guard = case.get('guard')
    for _ in range(100):
        values = {i.name: i.draw() for i in case['inputs']}
        if guard is None or guard(**values) > MARGIN:
            return values
    raise RuntimeError(f"{case['name']}: no inputs found {MARGIN} away from a branch switch in 100 draws")


def record_case(case, base, dtype):
    """One fixture entry: `case` evaluated in `dtype` on `base` (float64 inputs rounded to dtype)."""
    inputs = {}
    for spec in case['inputs']:
        t = base[spec.name]
        if t.is_floating_point():
            t = t.to(dtype).detach().clone().requires_grad_(spec.grad)
        inputs[spec.name] = t
    out = case['fn'](**inputs)
    weight = None
    if out.numel() == 1 and out.dim() == 0:
        out.backward()
    else:
        # Weighting the outputs makes every output element's gradient count and differ.
        weight = torch.randn(out.shape, dtype=torch.float64).to(dtype)
        out.backward(weight)
    return {
        'name': case['name'],
        'description': case['description'],
        'dtype': dtype_name(out),
        'inputs': [
            {'name': s.name, 'dtype': dtype_name(inputs[s.name]), 'requiresGrad': bool(inputs[s.name].requires_grad), **tensor_json(inputs[s.name])}
            for s in case['inputs']
        ],
        'output': tensor_json(out),
        'weight': tensor_json(weight) if weight is not None else None,
        'grads': {s.name: tensor_json(inputs[s.name].grad) for s in case['inputs'] if inputs[s.name].requires_grad},
    }


def record_expressions():
    torch.manual_seed(SEED)
    cases = []
    for case in CASES:
        base = draw_inputs(case)
        for dtype in (torch.float64, torch.float32):
            cases.append(record_case(case, base, dtype))
    return {
        'generatedBy': GENERATED_BY,
        'torch': torch.__version__,
        'seed': SEED,
        'about': 'Each case: inputs, the forward output, and each input\'s gradient: of the output itself when it is a '
                 'scalar (weight null), else of sum(output * weight), i.e. output.backward(weight). float32 cases use the '
                 'float64 inputs rounded to float32. Values are flat, row-major.',
        'cases': cases,
    }


# ---------------------------------------------------------------- optimizers

SIZES = [4, 8, 3]
BATCH = 6
STEPS = 10

# Options exactly as passed to torch (torch's names); unlisted ones keep their defaults.
OPTIMIZERS = [
    ('sgd_momentum_wd', 'SGD', {'lr': 0.1, 'momentum': 0.9, 'weight_decay': 0.01}),
    ('sgd_nesterov', 'SGD', {'lr': 0.05, 'momentum': 0.8, 'nesterov': True, 'weight_decay': 0.001}),
    ('sgd_momentum_dampening', 'SGD', {'lr': 0.05, 'momentum': 0.9, 'dampening': 0.5}),
    ('adam', 'Adam', {'lr': 0.01}),
    ('adam_l2', 'Adam', {'lr': 0.02, 'betas': [0.8, 0.99], 'eps': 1e-6, 'weight_decay': 0.1}),
    ('adamw', 'AdamW', {'lr': 0.02, 'betas': [0.85, 0.995], 'weight_decay': 0.1}),
    ('adamw_defaults', 'AdamW', {}),
]

STATE_KEYS = {'SGD': ['momentum_buffer'], 'Adam': ['step', 'exp_avg', 'exp_avg_sq'], 'AdamW': ['step', 'exp_avg', 'exp_avg_sq']}


def make_model(init, dtype):
    model = torch.nn.Sequential(torch.nn.Linear(SIZES[0], SIZES[1]), torch.nn.ReLU(), torch.nn.Linear(SIZES[1], SIZES[2])).to(dtype)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(init[name])
    return model


def state_json(state, key):
    value = state[key]
    return value.item() if key == 'step' else tensor_json(value)['values']


def record_trajectory(name, kind, options, init, x, y, dtype):
    model = make_model(init, dtype)
    xs = x.to(dtype)
    opt_options = {k: tuple(v) if k == 'betas' else v for k, v in options.items()}
    opt = getattr(torch.optim, kind)(model.parameters(), **opt_options)
    steps = []
    first_grads = None
    min_margin = math.inf
    for step in range(1, STEPS + 1):
        opt.zero_grad()
        pre = xs @ model[0].weight.T + model[0].bias
        min_margin = min(min_margin, relu_margin(pre))
        loss = F.cross_entropy(model(xs), y)
        loss.backward()
        if first_grads is None:
            first_grads = {n: tensor_json(p.grad)['values'] for n, p in model.named_parameters()}
        opt.step()
        steps.append({
            'step': step,
            'loss': Num(loss.item(), dtype_name(loss)),
            'params': {n: tensor_json(p)['values'] for n, p in model.named_parameters()},
        })
    if min_margin < TRAJECTORY_MARGIN:
        raise RuntimeError(f'{name} ({dtype}): a ReLU pre-activation came within {min_margin} of 0; pick another seed')
    group = opt.param_groups[0]
    resolved = {k: (list(v) if isinstance(v, tuple) else v) for k, v in group.items() if k != 'params' and isinstance(v, (int, float, bool, tuple))}
    return {
        'name': name,
        'optimizer': kind,
        'dtype': dtype_name(xs),
        'options': options,
        'resolvedOptions': resolved,
        'gradsAtStep1': first_grads,
        'steps': steps,
        'finalState': {
            n: {key: state_json(opt.state[p], key) for key in STATE_KEYS[kind]}
            for n, p in model.named_parameters()
        },
        'minReluMargin': min_margin,
    }


def record_optim():
    torch.manual_seed(SEED + 1)
    # torch's default initialisation, in float32; the float64 runs start from the same (exact) values.
    ref = torch.nn.Sequential(torch.nn.Linear(SIZES[0], SIZES[1]), torch.nn.ReLU(), torch.nn.Linear(SIZES[1], SIZES[2]))
    init = {n: p.detach().clone() for n, p in ref.named_parameters()}
    x = torch.randn(BATCH, SIZES[0])
    y = torch.randint(0, SIZES[-1], (BATCH,))
    trajectories = [
        record_trajectory(name, kind, options, init, x, y, dtype)
        for dtype in (torch.float32, torch.float64)
        for name, kind, options in OPTIMIZERS
    ]
    return {
        'generatedBy': GENERATED_BY,
        'torch': torch.__version__,
        'seed': SEED + 1,
        'about': 'Each trajectory starts from model.init, and each step is: zero_grad; loss = cross_entropy(model(x), y); '
                 'backward; step. steps[i].loss is the loss before step i+1, steps[i].params the parameters after it. '
                 'finalState is the optimizer state of every parameter after the last step (torch names). '
                 'Options are as passed to torch; resolvedOptions include torch\'s defaults. model.init and batch.x '
                 'are float32 values written in full (float64) precision, so that both dtypes read them exactly.',
        'model': {
            'sizes': SIZES,
            'activation': 'relu',
            'layers': 'Sequential(Linear(4, 8), ReLU(), Linear(8, 3))',
            'init': {n: tensor_json(t.double()) for n, t in init.items()},
        },
        'batch': {'x': tensor_json(x.double()), 'y': tensor_json(y)},
        'trajectories': trajectories,
    }


def main():
    torch.set_num_threads(1)
    os.makedirs(OUT_DIR, exist_ok=True)
    write('expressions.json', record_expressions())
    write('optim.json', record_optim())


if __name__ == '__main__':
    sys.exit(main())
