/**
 * The fabric holds a bounded amount for each rank, because it lives in the
 * launching process (the grader's, for a submission): receives posted and
 * not complete, and messages sent that no rank has received. A rank past a
 * bound fails with a FabricLimitError that names the bound and what to do;
 * a program that receives what it is sent never meets one, however many
 * messages it exchanges.
 */
import { describe, expect, it } from 'vitest';
import { launch } from '../src/index.ts';
import { MAX_OPEN_RECEIVES, MAX_UNRECEIVED_BYTES, MAX_UNRECEIVED_MESSAGES } from '../src/fabric.ts';
import { BACKENDS, program } from './support.ts';

describe.each(BACKENDS)('fabric limits (%s)', (backend) => {
  it('more open receives than the bound: the rank that posts them fails, naming the bound', async () => {
    const r = await launch({ worldSize: 2, backend, program: program('flood', 'postsReceives'), args: [MAX_OPEN_RECEIVES + 10], timeoutMs: 20_000 });
    expect(r.ranks[0]!.status).toBe('error');
    expect(r.ranks[0]!.error?.name).toBe('FabricLimitError');
    expect(r.ranks[0]!.error?.message).toBe(`rank 0: more than ${MAX_OPEN_RECEIVES} receives posted and not yet complete: wait on each receive (work.wait()) before posting many more`);
  });

  it('more unreceived messages than the bound: the sender fails', async () => {
    const r = await launch({ worldSize: 2, backend, program: program('flood', 'sendsUnread'), args: [MAX_UNRECEIVED_MESSAGES + 10], timeoutMs: 30_000 });
    expect(r.ranks[0]!.status).toBe('error');
    expect(r.ranks[0]!.error?.message).toMatch(new RegExp(`^rank 0: more than ${MAX_UNRECEIVED_MESSAGES} messages sent that no rank has received yet`));
  });

  it('more unreceived bytes than the bound: the sender fails before the fabric holds them', async () => {
    const numel = 4 * 2 ** 20; // 16 MiB a message
    const r = await launch({ worldSize: 2, backend, program: program('flood', 'sendsUnreadBytes'), args: [MAX_UNRECEIVED_BYTES / (4 * numel) + 2, numel], timeoutMs: 30_000, memoryLimitMb: 1024 });
    expect(r.ranks[0]!.status).toBe('error');
    expect(r.ranks[0]!.error?.message).toMatch(new RegExp(`^rank 0: more than ${MAX_UNRECEIVED_BYTES / 2 ** 20} MiB sent that no rank has received yet`));
  });

  it('many more messages than any bound, each received in turn: no limit is met', async () => {
    const n = MAX_OPEN_RECEIVES * 2;
    const r = await launch({ worldSize: 2, backend, program: program('flood', 'manyInTurn'), args: [n], timeoutMs: 60_000 });
    expect(r.ok, JSON.stringify(r.ranks.map((o) => o.error?.message))).toBe(true);
    expect(r.stats[1]!.messagesSent).toBe(n);
  });
});
