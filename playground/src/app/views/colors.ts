/** One colour per rank (up to 8, the views' largest world). */
export const RANK_COLORS = ['#e15759', '#4e79a7', '#59a14f', '#f28e2b', '#b07aa1', '#76b7b2', '#edc948', '#9c755f'];
