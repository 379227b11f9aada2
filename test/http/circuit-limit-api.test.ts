import { describe, expect, it, onTestFinished } from 'vitest';
import { expectOnlyAfter, MovableLoadClock } from '../support/load-clock.js';
import { connectStation, type SimulatedStation } from '../support/station.js';
import { restartDaemon } from '../webhooks/harness.js';
import { charging, inBrussels, limitsOn, RAISE_AFTER_S, temporaryLimitSite } from '../load/temporary-limit-site.js';
import { apiDaemonForTest, type ApiDaemon } from './api-harness.js';

const HOUR_MS = 3_600_000;
/** A step runs at least every second and the stations answer at once: a change shows well within this. */
const WITHIN_MS = 5_000;

const limitPath = (siteId: string, circuitId: string) => `/sites/${siteId}/circuits/${circuitId}/limit`;

/**
 * The daemon, on a load clock the test moves (clock.meanwhile for waits on raiseAfterS and a limit's end), and a
 * token of an application with charge-points:control over the company.
 */
async function limitDaemon(): Promise<ApiDaemon & { ops: string; opsClientId: string; clock: MovableLoadClock }> {
  const clock = new MovableLoadClock();
  const api = await apiDaemonForTest(temporaryLimitSite(), { loadClock: clock });
  const ops = api.createApp('ops');
  return Object.assign(api, { ops: await api.token(ops), opsClientId: ops.clientId, clock });
}

describe('temporary circuit limits through the API (docs/configuration/circuits.md#circuits-load-management)', () => {
  it("a PUT lowers the charging stations' TxProfiles within 2 s; DELETE ends it and they are raised after raiseAfterS", async () => {
    const api = await limitDaemon();
    const [a, b] = [await api.connect('CP001'), await api.connect('CP002')];
    const limits = limitsOn(api.clock, a, b);
    await charging(a, b);
    await expect.poll(api.clock.meanwhile(limits), { timeout: WITHIN_MS }).toEqual([12, 12]);

    const until = inBrussels(Date.now() + HOUR_MS);
    const put = await api.call('PUT', limitPath('s1', 'main'), { token: api.ops, body: { maxCurrentA: 16, until } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({
      siteId: 's1',
      circuitId: 'main',
      configuredMaxCurrentA: 24,
      temporaryLimit: { maxCurrentA: 16, until, setAt: expect.any(String), setBy: `api:${api.opsClientId}` },
      effectiveMaxCurrentA: 16,
    });
    // Lowering is immediate: the profile stacks of both stations hold 8 A within 2 s.
    await expect.poll(limits, { timeout: 2_000 }).toEqual([8, 8]);
    expect(api.logged('temporary circuit limit applies')).toEqual([
      expect.objectContaining({ circuitId: 'main', maxCurrentA: 16, effectiveMaxCurrentA: 16 }),
    ]);
    expect((await api.call('GET', limitPath('s1', 'main'), { token: api.ops })).body).toEqual(put.body);
    // What load management shows of the circuit: the limit that holds, the configured one, the temporary one.
    const shown = await api.call('GET', '/sites/s1/circuits', { token: api.ops });
    expect(shown.body).toMatchObject({
      circuits: [
        {
          circuitId: 'main',
          maxCurrentA: 16,
          configuredMaxCurrentA: 24,
          temporaryLimit: { maxCurrentA: 16, until: new Date(until).toISOString(), setBy: `api:${api.opsClientId}` },
        },
      ],
    });

    // A second PUT replaces the first; one above the configured 24 A changes nothing (a temporary limit only lowers).
    const above = await api.call('PUT', limitPath('s1', 'main'), {
      token: api.ops,
      body: { maxCurrentA: 40, until },
    });
    expect(above.body).toMatchObject({ temporaryLimit: { maxCurrentA: 40 }, effectiveMaxCurrentA: 24 });
    await api.call('PUT', limitPath('s1', 'main'), { token: api.ops, body: { maxCurrentA: 16, until } });

    const deleted = await fetch(`${api.baseUrl}${limitPath('s1', 'main')}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${api.ops}` },
    });
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe('');
    await expectOnlyAfter(api.clock, RAISE_AFTER_S * 1000, limits, [12, 12], WITHIN_MS);
    expect(api.logged('temporary circuit limit ended')).toContainEqual(
      expect.objectContaining({ circuitId: 'main', reason: 'cleared' }),
    );

    // Nothing to end any more: 404, and the state shows no temporary limit.
    const again = await api.call('DELETE', limitPath('s1', 'main'), { token: api.ops });
    expect(again).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect((await api.call('GET', limitPath('s1', 'main'), { token: api.ops })).body).toMatchObject({
      temporaryLimit: null,
      effectiveMaxCurrentA: 24,
    });
  });

  it('refuses a bad body with 400 naming the field, a caller without control over the whole site with 403, an unknown circuit with 404', async () => {
    const api = await limitDaemon();
    const future = inBrussels(Date.now() + HOUR_MS);
    const put = (body: unknown, token = api.ops, path = limitPath('s1', 'main')) =>
      api.call('PUT', path, { token, body });

    const invalid: Array<[body: unknown, field: string, message: RegExp]> = [
      [{ maxCurrentA: 16 }, 'until', /^required$/],
      [{ until: future }, 'maxCurrentA', /^required$/],
      [{ maxCurrentA: 16, until: inBrussels(Date.now() - 60_000) }, 'until', /must be in the future/],
      [{ maxCurrentA: 16, until: '2999-01-01T00:00:00' }, 'until', /and an offset/],
      [{ maxCurrentA: 16, until: 'tomorrow' }, 'until', /ISO 8601/],
      [{ maxCurrentA: 16, until: 1893456000 }, 'until', /string/],
      [{ maxCurrentA: 0, until: future }, 'maxCurrentA', /above 0/],
      [{ maxCurrentA: -5, until: future }, 'maxCurrentA', /above 0/],
      [{ maxCurrentA: '16', until: future }, 'maxCurrentA', /number of amperes/],
      [{ maxCurrentA: 20_000, until: future }, 'maxCurrentA', /at most 10000/],
      // The CLI's rule, shared: at least 0.1 A, to a tenth of an ampere (the precision of an OCPP limit).
      [{ maxCurrentA: 1e-9, until: future }, 'maxCurrentA', /at least 0\.1 A/],
      [{ maxCurrentA: 16.25, until: future }, 'maxCurrentA', /whole tenths of an ampere/],
      [{ maxCurrentA: 16, until: '9999-12-31T23:59:59Z' }, 'until', /at most 366 days from now/],
      [{ maxCurrentA: 16, until: inBrussels(Date.now() + 367 * 24 * HOUR_MS) }, 'until', /at most 366 days/],
    ];
    for (const [body, field, message] of invalid) {
      const answer = await put(body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error).toBe('invalid_request');
      expect(answer.body.message).toContain(`body: ${field}: `);
      expect(answer.body.problems).toEqual([{ path: field, message: expect.stringMatching(message) }]);
    }
    const unknownKey = await put({ maxCurrentA: 16, until: future, reason: 'grid' });
    expect(unknownKey).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    expect(unknownKey.body.message).toContain('reason');

    const notJson = await fetch(`${api.baseUrl}${limitPath('s1', 'main')}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${api.ops}`, 'content-type': 'application/json' },
      body: '{"maxCurrentA": 16,',
    });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toEqual({ error: 'invalid_request', message: 'body: not valid JSON' });

    const valid = { maxCurrentA: 16, until: future };
    expect((await api.call('PUT', limitPath('s1', 'main'), { body: valid })).status).toBe(401);
    const viewer = await put(valid, await api.token(api.createApp('viewer-s1')));
    expect(viewer).toMatchObject({ status: 403, body: { error: 'insufficient_scope' } });
    // Control over one station on the circuit is not control over the circuit, nor is control over another site.
    for (const group of ['control-cp001', 'control-s2']) {
      const answer = await put(valid, await api.token(api.createApp(group)));
      expect(answer, group).toMatchObject({ status: 403, body: { error: 'forbidden' } });
      const deleted = await api.call('DELETE', limitPath('s1', 'main'), {
        token: await api.token(api.createApp(group)),
      });
      expect(deleted.status, group).toBe(403);
    }

    expect(await put(valid, api.ops, limitPath('s1', 'nope'))).toMatchObject({
      status: 404,
      body: { error: 'not_found', message: 'no circuit "nope" in site "s1"' },
    });
    // garage is s2's.
    expect((await put(valid, api.ops, limitPath('s1', 'garage'))).status).toBe(404);
    expect((await put(valid, api.ops, limitPath('nowhere', 'main'))).status).toBe(404);
    expect((await api.call('DELETE', limitPath('s1', 'nope'), { token: api.ops })).status).toBe(404);

    // None of the refusals left a limit; a site grant is enough.
    expect(api.db.prepare('SELECT COUNT(*) FROM circuit_temporary_limits').pluck().get()).toBe(0);
    const siteControl = await put(valid, await api.token(api.createApp('control-s1')));
    expect(siteControl).toMatchObject({ status: 200, body: { effectiveMaxCurrentA: 16 } });
    // The far end of the bound and a tenth of an ampere are taken.
    const farthest = inBrussels(Date.now() + 365 * 24 * HOUR_MS);
    expect(await put({ maxCurrentA: 24.5, until: farthest })).toMatchObject({
      status: 200,
      body: { temporaryLimit: { maxCurrentA: 24.5, until: farthest } },
    });
  });

  it('an expired limit no longer applies: the stations are raised after until passes, with the usual damping', async () => {
    const api = await limitDaemon();
    const station = await api.connect('CP001');
    const [limit] = [limitsOn(api.clock, station)];
    await charging(station);
    await expect.poll(api.clock.meanwhile(limit), { timeout: WITHIN_MS }).toEqual([24]);

    const untilMs = api.clock.wallMs() + 3_000;
    const put = await api.call('PUT', limitPath('s1', 'main'), {
      token: api.ops,
      body: { maxCurrentA: 10, until: inBrussels(untilMs) },
    });
    expect(put.status).toBe(200);
    await expect.poll(limit, { timeout: 2_000 }).toEqual([10]);
    // Load management ends it on its clock, then raises after raiseAfterS.
    await expectOnlyAfter(
      api.clock,
      untilMs - api.clock.wallMs(),
      () => api.logged('temporary circuit limit ended').length,
      1,
      WITHIN_MS,
    );
    await expectOnlyAfter(api.clock, RAISE_AFTER_S * 1000, limit, [24], WITHIN_MS);
    expect(api.logged('temporary circuit limit ended')).toEqual([
      expect.objectContaining({ circuitId: 'main', reason: 'expired' }),
    ]);
    expect((await api.call('GET', limitPath('s1', 'main'), { token: api.ops })).body).toMatchObject({
      temporaryLimit: null,
    });
    // Ended: nothing to DELETE.
    expect((await api.call('DELETE', limitPath('s1', 'main'), { token: api.ops })).status).toBe(404);
  });

  it('a limit survives a daemon restart until its until; one that ended while the daemon was down does not apply', async () => {
    const api = await limitDaemon();
    const shortUntilMs = Date.now() + 2_000;
    const set = async (siteId: string, circuitId: string, maxCurrentA: number, until: number) =>
      expect(
        (
          await api.call('PUT', limitPath(siteId, circuitId), {
            token: api.ops,
            body: { maxCurrentA, until: inBrussels(until) },
          })
        ).status,
      ).toBe(200);
    await set('s1', 'main', 10, Date.now() + HOUR_MS);
    await set('s2', 'garage', 8, shortUntilMs);

    // The garage limit ends while the daemon is down: it comes back, on its load clock, after that limit's until.
    const clock = new MovableLoadClock();
    clock.advance(shortUntilMs - Date.now() + 200);
    const restarted = await restartDaemon(api, { loadClock: clock });
    onTestFinished(() => restarted.daemon.stop());

    const stations: SimulatedStation[] = [];
    onTestFinished(async () => {
      await Promise.all(stations.map((s) => s.close()));
    });
    const url = `ws://127.0.0.1:${restarted.daemon.ocppPort}/ocpp`;
    for (const id of ['CP001', 'CP003']) stations.push(await connectStation(url, id));
    const [cp001, cp003] = stations as [SimulatedStation, SimulatedStation];
    await charging(cp001, cp003);
    // Each starts on the fail-safe (6 A) and is raised after raiseAfterS: CP001 to main's temporary 10 A, CP003 to
    // garage's configured 16 A.
    await expect.poll(clock.meanwhile(limitsOn(clock, cp001, cp003)), { timeout: WITHIN_MS }).toEqual([10, 16]);
    // Another raiseAfterS on: the step that runs on it still allows CP001 no more than main's temporary 10 A.
    clock.advance(RAISE_AFTER_S * 1000 + 500);
    const shown = await api.call('GET', '/sites/s1/circuits', { token: api.ops });
    expect(shown.body.connectors).toContainEqual(expect.objectContaining({ chargePointId: 'CP001-A', allowedA: 10 }));

    const state = await api.call('GET', limitPath('s1', 'main'), { token: api.ops });
    expect(state.body).toMatchObject({ temporaryLimit: { maxCurrentA: 10 }, effectiveMaxCurrentA: 10 });
  });
});
