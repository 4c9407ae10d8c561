import { randomHex } from './ids';

/** Structured log lines; every line carries the request id. Never pass secrets or bearer tokens here. */
export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(requestId: string): Logger {
  const emit = (level: string, msg: string, fields?: Record<string, unknown>) => {
    const line = JSON.stringify({ level, msg, requestId, ...fields });
    if (level === 'error') console.error(line);
    else if (level === 'warn') console.warn(line);
    else console.log(line);
  };
  return {
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}

export function newRequestId(): string {
  return `req_${randomHex(12)}`;
}
