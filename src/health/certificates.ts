import { X509Certificate } from 'node:crypto';
import { worstLevel, type HealthLevel, type HealthSource } from './levels.js';

/** A TLS listener's certificate, as the listener loaded it at start (a renewed file takes effect on restart). */
export interface ServedCertificate {
  /** Which listener serves it, e.g. `ocpp` or `http`. */
  listener: string;
  file: string;
  pem: Buffer | string;
}

/** Stations and partners refuse an expired certificate: warn this long before it happens. */
const EXPIRY_WARNING_DAYS = 30;
const DAY_MS = 86_400_000;

export interface CertificateHealth {
  listener: string;
  file: string;
  notAfter: string;
  daysLeft: number;
  status: HealthLevel;
}

/** Critical outside its validity (clients refuse it), warning within EXPIRY_WARNING_DAYS of its end. */
export function certificateHealth(served: ServedCertificate, now = Date.now()): CertificateHealth {
  const x509 = new X509Certificate(served.pem);
  const notAfter = Date.parse(x509.validTo);
  const daysLeft = Math.trunc((notAfter - now) / DAY_MS);
  const valid = Date.parse(x509.validFrom) <= now && now < notAfter;
  const status: HealthLevel = !valid ? 'critical' : daysLeft < EXPIRY_WARNING_DAYS ? 'warning' : 'ok';
  return { listener: served.listener, file: served.file, notAfter: new Date(notAfter).toISOString(), daysLeft, status };
}

/** GET /health `certificates`: the TLS certificates the listeners serve, so an expiry shows weeks ahead. */
export function certificatesHealthSource(served: ServedCertificate[]): HealthSource {
  return {
    name: 'certificates',
    report: () => {
      const certificates = served.map((s) => certificateHealth(s));
      return { status: worstLevel(certificates.map((c) => c.status)), certificates };
    },
  };
}
