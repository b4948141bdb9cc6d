/**
 * The pipeline of the ex11 checks, made from a seed: a stack of linear
 * layers with tanh between them, cut into consecutive stages, each rank's
 * batch at each step, and the same model trained by SGD in one process on
 * the whole batch. Rank programs (in the rank workers) and checks (in the
 * grading process) both call these, so the checker knows every weight and
 * every example without receiving them from student code.
 */
import { Generator, Tensor, chunkBounds, deriveSeed, flattenTensors, nn, optim, tensor, type DType } from '@dtlab/tensor';

/** A model, a batch shape and a schedule. */
export interface PipelineSpec {
  seed: number;
  /** Layer widths: layer i maps widths[i] to widths[i + 1]; the last width is the number of classes. */
  widths: number[];
  /** Examples per step, B. */
  batch: number;
  /** Micro-batches per step, m (rows chunkBounds(B, m)[j]). */
  microBatches: number;
  /** Pipeline stages, p: the world size. */
  stages: number;
  steps: number;
  lr: number;
  dtype: DType;
  /** Whether the inputs require grad (as an embedding's output would), so that stage 0 computes its input's gradient too. */
  inputsRequireGrad?: boolean;
}

/** Layers of stage s: a contiguous run of the model's layers, chunkBounds(L, p)[s]. */
export function stageLayers(spec: PipelineSpec, stage: number): { start: number; end: number } {
  return chunkBounds(spec.widths.length - 1, spec.stages)[stage]!;
}

/** Layer i of the model (the same everywhere: seeded by the spec and i). */
function layer(spec: PipelineSpec, i: number): nn.Linear {
  return new nn.Linear(spec.widths[i]!, spec.widths[i + 1]!, { seed: deriveSeed(spec.seed, 100 + i), dtype: spec.dtype });
}

/**
 * Consecutive layers of the model, with tanh after every layer but the
 * model's last: one stage of the pipeline, or (all layers) the whole model.
 */
export class LayerStack extends nn.Module {
  readonly layers: nn.Linear[] = [];
  /** Whether this stack ends with the model's last layer (which has no tanh after it). */
  private readonly lastOfModel: boolean;

  constructor(spec: PipelineSpec, from: number, to: number) {
    super();
    for (let i = from; i < to; i++) this.layers.push(layer(spec, i));
    this.lastOfModel = to === spec.widths.length - 1;
  }

  forward(x: Tensor): Tensor {
    let h = x;
    this.layers.forEach((l, k) => {
      h = l.forward(h);
      if (!(this.lastOfModel && k === this.layers.length - 1)) h = h.tanh();
    });
    return h;
  }
}

/** Stage `s` of the pipeline. */
export function makeStage(spec: PipelineSpec, s: number): LayerStack {
  const { start, end } = stageLayers(spec, s);
  return new LayerStack(spec, start, end);
}

/** The batch of step `step`: inputs [B, widths[0]] and B classes. */
export function batchOf(spec: PipelineSpec, step: number): { inputs: Tensor; targets: number[] } {
  const gen = new Generator(deriveSeed(spec.seed, 7, step));
  const d = spec.widths[0]!;
  const classes = spec.widths[spec.widths.length - 1]!;
  const inputs = tensor(Array.from({ length: spec.batch * d }, () => gen.normal()), { shape: [spec.batch, d], dtype: spec.dtype });
  if (spec.inputsRequireGrad) inputs.requiresGrad = true;
  return { inputs, targets: Array.from({ length: spec.batch }, () => gen.int(classes)) };
}

/** What one process on the whole batch gets after each step: each stage's gradients and parameters (flat), and the loss. */
export interface ReferenceStep {
  grads: Tensor[];
  params: Tensor[];
  loss: number;
}

/** SGD on the whole model in one process, on the whole batch, `spec.steps` steps; per step, the figures cut by stage. */
export function singleProcessTraining(spec: PipelineSpec): ReferenceStep[] {
  const model = new LayerStack(spec, 0, spec.widths.length - 1);
  const opt = new optim.SGD(model.parameters(), { lr: spec.lr });
  const byStage = (ts: Tensor[]) => Array.from({ length: spec.stages }, (_, s) => {
    const { start, end } = stageLayers(spec, s);
    return flattenTensors(ts.slice(2 * start, 2 * end));
  });
  const out: ReferenceStep[] = [];
  for (let s = 0; s < spec.steps; s++) {
    const { inputs, targets } = batchOf(spec, s);
    opt.zeroGrad();
    const loss = nn.crossEntropy(model.forward(inputs), targets);
    loss.backward();
    const grads = byStage(model.parameters().map((p) => p.grad!));
    opt.step();
    out.push({ grads, params: byStage(model.parameters().map((p) => p.detach())), loss: loss.item() });
  }
  return out;
}
