/** Neural-network building blocks: modules, layers and loss functions. */
export { Module } from './module.ts';
export { Linear, ReLU, Tanh, Sequential, MLP, type LinearOptions, type MLPOptions } from './layers.ts';
export { mseLoss, crossEntropy, softmax, logSoftmax } from './functional.ts';
