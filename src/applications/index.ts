export { Applications, ApplicationError, UnknownApplicationError, type Application } from './applications.js';
export { grantsOf, reaches, scopeOf, type ChargePointLocation, type Grant } from './reach.js';
export { AccessTokenVerifier, InvalidAccessTokenError, issueAccessToken, type AccessTokenClaims } from './access-tokens.js';
