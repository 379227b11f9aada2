import { describe, expect, it, onTestFinished } from 'vitest';
import WebSocket from 'ws';
import { eventually, siteWith, daemonForTest } from '../support/daemon.js';

/** A station speaking raw frames, to send what no OCPP library would. */
class RawStation {
  private readonly frames: unknown[][] = [];
  private waiter: (() => void) | undefined;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      this.frames.push(JSON.parse(data.toString()) as unknown[]);
      this.waiter?.();
    });
  }

  static open(url: string, protocol = 'ocpp1.6'): Promise<RawStation> {
    const ws = new WebSocket(url, protocol);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new RawStation(ws)));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once('error', reject);
    });
  }

  /** Sends one frame and returns the next frame the central system sends back. */
  async exchange(frame: string): Promise<unknown[]> {
    const before = this.frames.length;
    this.ws.send(frame);
    while (this.frames.length === before) await new Promise<void>((resolve) => (this.waiter = resolve));
    return this.frames[before]!;
  }

  close(): void {
    this.ws.close();
  }
}

describe('bad input from stations', () => {
  it('answers malformed frames, unknown actions and schema violations with OCPP 1.6 CALLERRORs; the connection and other stations keep working', async () => {
    const t = await daemonForTest(
      siteWith(
        [],
        [
          { id: 'CP001', chargePoints: [{ id: 'CP001-A', connectors: [1] }] },
          { id: 'CP002', chargePoints: [{ id: 'CP002-A', connectors: [1] }] },
        ],
      ),
    );
    const healthy = await t.connect('CP002');
    await healthy.boot();
    const raw = await RawStation.open(`${t.url}/CP001`);
    onTestFinished(() => raw.close());

    expect(
      await raw.exchange('[2,"b1","BootNotification",{"chargePointVendor":"Raw","chargePointModel":"R"}]'),
    ).toEqual([3, 'b1', expect.objectContaining({ status: 'Accepted' })]);
    expect(await raw.exchange('{this is not json')).toEqual([4, '-1', 'FormationViolation', expect.any(String), {}]);
    expect(await raw.exchange('{"an":"object"}')).toEqual([4, '-1', 'FormationViolation', expect.any(String), {}]);
    expect(await raw.exchange('[9,"m1","Heartbeat",{}]')).toEqual([
      4,
      '-1',
      'FormationViolation',
      expect.any(String),
      {},
    ]);
    expect(await raw.exchange('[2,"m2","SelfDestruct",{}]')).toEqual([
      4,
      'm2',
      'NotImplemented',
      expect.any(String),
      {},
    ]);
    const wrongType = await raw.exchange(
      '[2,"m3","StatusNotification",{"connectorId":"one","errorCode":"NoError","status":"Available"}]',
    );
    expect(wrongType.slice(0, 3)).toEqual([4, 'm3', 'TypeConstraintViolation']);
    const missing = await raw.exchange('[2,"m4","Authorize",{}]');
    expect(missing.slice(0, 3)).toEqual([4, 'm4', 'OccurrenceConstraintViolation']);
    const badEnum = await raw.exchange(
      '[2,"m5","StatusNotification",{"connectorId":1,"errorCode":"NoError","status":"Sleeping"}]',
    );
    expect(badEnum.slice(0, 3)).toEqual([4, 'm5', 'FormationViolation']);
    const tooLong = await raw.exchange('[2,"m6","Authorize",{"idTag":"ABCDEFGHIJKLMNOPQRSTUVWXYZ"}]');
    expect(tooLong.slice(0, 3)).toEqual([4, 'm6', 'FormationViolation']);

    // Still the same connection, still served; the other station never noticed.
    expect(await raw.exchange('[2,"m7","Heartbeat",{}]')).toEqual([3, 'm7', { currentTime: expect.any(String) }]);
    expect(await healthy.authorize('T')).toEqual({ status: 'Invalid' });
    expect(t.events('ChargePointStatus')).toEqual([]);
    expect(
      t.logged('malformed frame from station').filter((l) => l.stationId === 'CP001').length,
    ).toBeGreaterThanOrEqual(3);
    expect(
      t.logged('station message failed the OCPP 1.6 schema').filter((l) => l.stationId === 'CP001').length,
    ).toBeGreaterThanOrEqual(4);
  });

  it('refuses upgrades offering neither ocpp2.0.1 nor ocpp1.6, outside ocpp.path, or with an unusable identity', async () => {
    const t = await daemonForTest(siteWith());
    await expect(RawStation.open(`${t.url}/CP001`, 'ocpp2.1')).rejects.toThrow('HTTP 400');
    await expect(RawStation.open(`${t.url.replace('/ocpp', '/other')}/CP001`)).rejects.toThrow('HTTP 404');
    await expect(RawStation.open(`${t.url}/${'X'.repeat(60)}`)).rejects.toThrow('HTTP 400');
    await expect(RawStation.open(`${t.url}/bad%zzid`)).rejects.toThrow('HTTP 400');
    const response = await fetch(t.url.replace('ws://', 'http://'));
    expect(response.status).toBe(426);
    // The listener still serves stations after all that.
    const station = await t.connect();
    expect(await station.boot()).toMatchObject({ status: 'Accepted' });
  });
});

/** Contract section 7: bounds every socket gets, authenticated or not, before a frame is parsed. */
describe('frame bounds', () => {
  function open(url: string): Promise<WebSocket> {
    const ws = new WebSocket(url, 'ocpp1.6');
    onTestFinished(() => ws.terminate());
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(ws));
      ws.once('error', reject);
    });
  }
  const closed = (ws: WebSocket): Promise<number> =>
    new Promise((resolve) => ws.once('close', (code) => resolve(code)));

  it('closes a socket with 1009 on a frame over ocpp.maxMessageBytes, before parsing it; other stations keep working', async () => {
    const t = await daemonForTest({
      ...siteWith(
        [],
        [
          { id: 'CP001', chargePoints: [{ id: 'CP001-A', connectors: [1] }] },
          { id: 'CP002', chargePoints: [{ id: 'CP002-A', connectors: [1] }] },
        ],
      ),
      ocpp: { host: '127.0.0.1', port: 0, securityProfile: 0, maxMessageBytes: 4096 },
    });
    const healthy = await t.connect('CP002');
    await healthy.boot();
    const ws = await open(`${t.url}/CP001`);
    const code = closed(ws);
    ws.send(`[2,"big","DataTransfer",{"vendorId":"x","data":"${'A'.repeat(4096)}"}]`);
    expect(await code).toBe(1009);
    expect(await healthy.heartbeat()).toEqual({ currentTime: expect.any(String) });
  });

  it('never echoes more than 1 KiB of what the station sent in a CALLERROR', async () => {
    const t = await daemonForTest(siteWith());
    const ws = await open(`${t.url}/CP001`);
    const answers: string[] = [];
    ws.on('message', (data: Buffer) => answers.push(data.toString()));
    // Schema-invalid (unknown property, 60 KB), a huge message id on a bad call, and a huge unparseable frame.
    ws.send(`[2,"m1","Heartbeat",{"junk":"${'J'.repeat(60_000)}"}]`);
    ws.send(`[2,"${'I'.repeat(30_000)}","Heartbeat",{"junk":1}]`);
    ws.send(`[2,"m3","Heartbeat",{"junk":"${'K'.repeat(30_000)}"`);
    await eventually(() => answers.length >= 3, 10_000, 'three CALLERRORs');
    for (const answer of answers) {
      expect(answer.length).toBeLessThanOrEqual(1024);
      expect(JSON.parse(answer)).toEqual([
        4,
        expect.any(String),
        expect.any(String),
        expect.any(String),
        expect.any(Object),
      ]);
    }
    // What the station's developer needs stays: the code and the validator's first complaint.
    expect(JSON.parse(answers[0]!)).toEqual([
      4,
      'm1',
      'PropertyConstraintViolation',
      expect.any(String),
      { error: '/ must NOT have additional properties' },
    ]);
  });

  it('disconnects a station after ocpp.maxBadMessages bad frames in a row; a good frame resets the count', async () => {
    const t = await daemonForTest({
      ...siteWith(),
      ocpp: { host: '127.0.0.1', port: 0, securityProfile: 0, maxBadMessages: 5 },
    });
    const ws = await open(`${t.url}/CP001`);
    const answers: string[] = [];
    ws.on('message', (data: Buffer) => answers.push(data.toString()));
    for (let i = 0; i < 4; i++) ws.send('not json');
    ws.send('[2,"ok","Heartbeat",{}]');
    await eventually(() => answers.some((a) => a.startsWith('[3,"ok"')), 10_000, 'the Heartbeat answer');
    const code = closed(ws);
    for (let i = 0; i < 5; i++) ws.send('not json');
    expect(await code).toBe(1002);
    expect(answers.filter((a) => a.startsWith('[4,'))).toHaveLength(8);
  });
});
