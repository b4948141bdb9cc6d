/**
 * The playground page: a view per tab, chosen by the URL's hash. Every view
 * runs the kit's real packages in this page (the runtime's browser entry,
 * the tensor library, the collectives) and draws what the run recorded.
 */
import { collectivesView } from './views/collectives.ts';
import { pipelineView } from './views/pipeline.ts';
import { traceView } from './views/trace.ts';
import { exerciseView, exerciseInfo } from './views/exercise.ts';

const views: Record<string, (root: HTMLElement) => void | Promise<void>> = {
  collectives: collectivesView,
  pipeline: pipelineView,
  trace: traceView,
  exercise: exerciseView,
};

async function show(): Promise<void> {
  const info = await exerciseInfo();
  const tab = document.getElementById('exercise-tab')!;
  tab.hidden = info === null;
  if (info) tab.textContent = `Exercise ${info.id}`;
  const fallback = info ? 'exercise' : 'collectives';
  const name = location.hash.slice(1) in views ? location.hash.slice(1) : fallback;
  for (const a of document.querySelectorAll('#tabs a')) a.classList.toggle('active', a.getAttribute('href') === `#${name}`);
  const root = document.getElementById('view')!;
  root.replaceChildren();
  root.dataset.view = name;
  await views[name]!(root);
}

window.addEventListener('hashchange', () => void show());
void show();
