export { worstLevel, type HealthLevel, type HealthSource } from './levels.js';
export {
  certificateHealth,
  certificatesHealthSource,
  type CertificateHealth,
  type ServedCertificate,
} from './certificates.js';
