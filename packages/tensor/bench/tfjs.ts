/**
 * TensorFlow.js as the peer of the tensor benchmark: tfjs-core on its pure-JS
 * `cpu` backend, with the gradients that training needs.
 *
 * tfjs-core's Node bundle ships no gradient for any kernel: the `@tensorflow/tfjs`
 * union package registers them from `dist/register_all_gradients.js`, an ES-module
 * tree written for bundlers (imports without `.js`, one of them a directory).
 * Here we load that same file, tfjs's own gradient code, by teaching Node's resolver
 * to add `.js` to relative imports inside @tensorflow packages. The gradients land in
 * tfjs's global registry, which every copy of tfjs-core shares.
 */
import { register } from 'node:module';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';

const addJsExtension = `
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (error) {
    if (specifier.startsWith('.') && context.parentURL?.includes('/@tensorflow/')) return next(specifier + '.js', context);
    throw error;
  }
}`;

/** tfjs-core with the cpu backend active and all gradients registered. */
export async function loadTfjs(): Promise<typeof tf> {
  register('data:text/javascript,' + encodeURIComponent(addJsExtension));
  await import('@tensorflow/tfjs-core/dist/register_all_gradients.js');
  await tf.setBackend('cpu');
  await tf.ready();
  // The cpu backend greets its first use in Node with advice to install tfjs-node (a native
  // backend, not the peer measured here); skip the banner so it does not split the output.
  (tf.backend() as unknown as { firstUse: boolean }).firstUse = false;
  return tf;
}
