import './stations-schemas.js';

/** How openapi.ts words a schema reference, a JSON response, an error response, and the Bearer errors. */
export interface OpenApiWords {
  ref(id: string): object;
  json(schema: object, description: string): object;
  error(description: string): object;
  bearerErrors: Record<string, object>;
}

/** The stations API's paths (contract 11.1) for GET /openapi.json; the schemas come from stations-schemas.ts. */
export function stationPaths({ ref, json, error, bearerErrors }: OpenApiWords): Record<string, unknown> {
  const read = [{ bearer: [] }, { oauth2: ['stations:read'] }];
  const operate = [{ bearer: [] }, { oauth2: ['stations:operate'] }];
  const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
  const notFound = error(
    "No such station, or one the application's groups do not reach (a company, site or station grant)",
  );
  const readRefused = error('The application lacks stations:read');
  const answers = {
    '200': json(
      ref('StationOperationAnswer'),
      'The station did what it was asked (Accepted, Unlocked, Scheduled, RebootRequired), or answered the read',
    ),
    '400': error(
      'Invalid path, query or body; a connector the station does not have, a 2.0.1 key not in Component.Variable form, a message the protocol cannot trigger',
    ),
    ...bearerErrors,
    '403': error('The application lacks stations:operate'),
    '404': notFound,
    '409': error(
      "`station_refused`: the station refused (Rejected, UnlockFailed, NotSupported, a CALLERROR code, ...); the body has the answer's fields too. `no_base_report`: a 2.0.1 read without keys before any base report",
    ),
    '429': error('`station_busy`: 16 operations already wait for this station'),
    '503': error('`station_offline`: the station is not connected'),
    '504': error('`station_timeout`: no answer within 2 x ocpp.callTimeoutMs of the request, waiting included'),
  };
  const logIdParameter = { name: 'logId', in: 'path', required: true, schema: { type: 'string' } };
  // Stations use these, not API clients: the token in the path is the credential (contract 11.3).
  const upload = (operationId: string, summary: string) => ({
    operationId,
    summary,
    security: [],
    parameters: [
      { name: 'token', in: 'path', required: true, schema: { type: 'string' } },
      { name: 'name', in: 'path', required: true, schema: { type: 'string' }, description: 'Reduced to a plain name' },
    ],
    requestBody: {
      required: true,
      content: {
        'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
        'multipart/form-data': {
          schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' } } },
        },
      },
    },
    responses: {
      '201': json(
        { type: 'object', properties: { name: { type: 'string' }, bytes: { type: 'integer' } } },
        'Kept; the token is spent',
      ),
      '400': error('multipart/form-data without a file part or boundary'),
      '404': error('Wrong, used or expired token: nothing written'),
      '413': error('Over logs.maxUploadBytes: nothing kept (a retry with a smaller file may use the token)'),
    },
  });
  const operation = (operationId: string, summary: string, body?: string) => ({
    post: {
      operationId,
      summary,
      security: operate,
      parameters: [idParameter],
      ...(body && { requestBody: { required: true, content: { 'application/json': { schema: ref(body) } } } }),
      responses: answers,
    },
  });
  return {
    '/stations': {
      get: {
        operationId: 'listStations',
        summary:
          "The stations the application's groups reach: what each is (its last BootNotification), its connectors",
        security: read,
        responses: { '200': json(ref('StationList'), 'Stations'), ...bearerErrors, '403': readRefused },
      },
    },
    '/stations/{id}': {
      get: {
        operationId: 'getStation',
        summary: 'One station, its last 50 operations and (2.0.1) its last base report',
        security: read,
        parameters: [idParameter],
        responses: {
          '200': json(ref('StationDetail'), 'The station'),
          ...bearerErrors,
          '403': readRefused,
          '404': notFound,
        },
      },
    },
    '/stations/{id}/reset': operation(
      'resetStation',
      'Reset: 1.6 Soft/Hard, 2.0.1 OnIdle/Immediate',
      'StationResetRequest',
    ),
    '/stations/{id}/unlock': operation('unlockConnector', 'UnlockConnector', 'StationUnlockRequest'),
    '/stations/{id}/availability': operation(
      'changeAvailability',
      'ChangeAvailability of the station or a connector (2.0.1: its EVSE)',
      'StationAvailabilityRequest',
    ),
    '/stations/{id}/trigger': operation('triggerMessage', 'TriggerMessage', 'StationTriggerRequest'),
    '/stations/{id}/clear-cache': operation('clearCache', 'ClearCache: the station forgets its authorization cache'),
    '/stations/{id}/report': operation(
      'getBaseReport',
      '2.0.1: GetBaseReport FullInventory (the NotifyReport parts show in GET /stations/{id}); 1.6: GetConfiguration of every key',
    ),
    '/stations/{id}/logs': {
      post: {
        operationId: 'collectStationLog',
        summary:
          'Contract 11.3: the station uploads its diagnostics log to the gateway (1.6 GetDiagnostics, 2.0.1 GetLog); follow it with GET .../logs/{logId}',
        security: operate,
        parameters: [idParameter],
        requestBody: { required: false, content: { 'application/json': { schema: ref('StationLogRequest') } } },
        responses: {
          '202': json(ref('StationLogAccepted'), 'The station accepted: it uploads now'),
          '400': error('Invalid body (since not RFC 3339, via not http or ftp), or via ftp without logs.ftp'),
          ...bearerErrors,
          '403': error('The application lacks stations:operate'),
          '404': notFound,
          '409': error(
            '`station_refused` (the body has the answer and the logId, recorded as failed); `logs_in_progress`: a collection already runs on this station',
          ),
          '429': answers['429'],
          '503': answers['503'],
          '504': answers['504'],
        },
      },
    },
    '/stations/{id}/logs/{logId}': {
      get: {
        operationId: 'getStationLog',
        summary: 'A log collection: its state (uploaded and failed are final), why it failed, the file once here',
        security: read,
        parameters: [idParameter, logIdParameter],
        responses: {
          '200': json(ref('StationLog'), 'The collection'),
          ...bearerErrors,
          '403': readRefused,
          '404': error('No such station within reach, or no such log of it'),
        },
      },
    },
    '/stations/{id}/logs/{logId}/file': {
      get: {
        operationId: 'downloadStationLog',
        summary: 'The uploaded file, as the station sent it',
        security: read,
        parameters: [idParameter, logIdParameter],
        responses: {
          '200': {
            description: 'The file (Content-Disposition names it)',
            content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
          },
          ...bearerErrors,
          '403': readRefused,
          '404': error('No such station or log within reach, or no file (not uploaded yet, or removed by a bound)'),
        },
      },
    },
    '/uploads/{token}/{name}': {
      put: upload(
        'uploadStationLog',
        'A station uploads a log (raw body) to the location GetDiagnostics/GetLog gave it',
      ),
      post: upload(
        'postStationLog',
        'A station uploads a log, raw or multipart/form-data with one file part, to the location it was given',
      ),
    },
    '/stations/{id}/configuration': {
      get: {
        operationId: 'getStationConfiguration',
        summary:
          '1.6 GetConfiguration; 2.0.1 GetVariables (attribute Actual), or without keys the variables of the last base report',
        security: read,
        parameters: [
          idParameter,
          {
            name: 'key',
            in: 'query',
            required: false,
            schema: { type: 'array', items: { type: 'string' } },
            style: 'form',
            explode: true,
            description: '1.6: a key; 2.0.1: Component.Variable or Component[evse].Variable. Repeat for several',
          },
        ],
        responses: { ...answers, '403': readRefused },
      },
      put: {
        operationId: 'setStationConfiguration',
        summary: '1.6 ChangeConfiguration; 2.0.1 SetVariables (attribute Actual)',
        security: operate,
        parameters: [idParameter],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: ref('StationConfigurationSetRequest') } },
        },
        responses: answers,
      },
    },
  };
}
