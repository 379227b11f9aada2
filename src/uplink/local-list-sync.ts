import { applyCsmsLocalList, csmsLocalListVersion, type CsmsLocalList } from '../authorization/index.js';
import type { Logger } from '../log/index.js';
import type { Writer } from '../store/index.js';

/**
 * The CSMS's local authorization list for a station (docs/design/uplink.md#uplink-what-the-csms-sees): the station and chargegate's copy
 * take the same lists, so the version the CSMS reads back is the version of the list chargegate decides with.
 */
export class LocalListSync {
  constructor(
    private readonly writer: Writer,
    private readonly log: Logger,
    private readonly now: () => Date,
  ) {}

  /**
   * SendLocalList, relayed: once the station accepted it, chargegate's copy takes it too, durably, before the CSMS
   * hears the answer. Anything else the station answers (Failed, NotSupported, VersionMismatch) leaves the copy as it
   * was, as it leaves the station's.
   */
  async send<Answer extends { status: string }>(
    stationId: string,
    list: CsmsLocalList,
    relay: () => Promise<Answer>,
  ): Promise<Answer> {
    const answer = await relay();
    const { status } = answer;
    const { listVersion, updateType } = list;
    if (status !== 'Accepted') {
      this.log.info(
        { stationId, listVersion, updateType, status },
        "station did not take the CSMS's local list: chargegate's copy unchanged",
      );
      return answer;
    }
    const { writer } = this;
    await writer.durable(() => writer.write(() => applyCsmsLocalList(writer.db, stationId, list, this.now())));
    this.log.info(
      { stationId, listVersion, updateType, entries: list.localAuthorizationList?.length ?? 0 },
      "CSMS's local list taken",
    );
    return answer;
  }

  /**
   * GetLocalListVersion: the station's version when chargegate's copy has the same one. When they differ (a list the
   * station kept from before the uplink, or one it took while chargegate's write failed) the CSMS is answered 0, an
   * empty list, so it sends a Full one that both take. -1 (a 1.6 station keeps no list) is passed on. `field` names
   * the version in the answer: 1.6's listVersion, 2.0.1's versionNumber.
   */
  async version<Field extends 'listVersion' | 'versionNumber'>(
    stationId: string,
    relay: () => Promise<Record<Field, number>>,
    field: Field,
  ): Promise<Record<Field, number>> {
    const answer = await relay();
    const stationVersion = answer[field];
    const own = csmsLocalListVersion(this.writer.db, stationId) ?? 0;
    if (stationVersion === -1 || stationVersion === own) return answer;
    this.log.info(
      { stationId, stationVersion, chargegateVersion: own },
      'local list versions differ: CSMS answered 0 so that it sends a Full list',
    );
    return { [field]: 0 } as Record<Field, number>;
  }
}
