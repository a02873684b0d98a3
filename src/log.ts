/**
 * Structured logging: one JSON object per line when LOG_FORMAT=json (for log collectors),
 * otherwise a compact human line. Everything goes to stderr so stdout stays free for command output.
 */
export type Fields = Record<string, unknown>;
export type Level = 'debug' | 'info' | 'warn' | 'error';

const levels: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const formats = ['human', 'json'];

/**
 * LOG_LEVEL (any case, default info) and LOG_FORMAT (default human), checked at a process's start: a typo stops it
 * with a message, where it would otherwise log at the default in silence.
 */
export function checkLogSettings(env: NodeJS.ProcessEnv = process.env): void {
  const level = env.LOG_LEVEL;
  if (level && !Object.hasOwn(levels, level.toLowerCase())) {
    throw new Error(`LOG_LEVEL=${level}: expected one of ${Object.keys(levels).join(', ')} (any case)`);
  }
  const format = env.LOG_FORMAT;
  if (format && !formats.includes(format)) {
    throw new Error(`LOG_FORMAT=${format}: expected ${formats.join(' or ')}`);
  }
}

export interface Logger {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  child(fields: Fields): Logger;
}

function formatValue(v: unknown): string {
  if (typeof v === 'string') return /[\s"=]/.test(v) ? JSON.stringify(v) : v;
  if (v instanceof Error) return JSON.stringify(v.message);
  return JSON.stringify(v);
}

export function createLogger(component: string, base: Fields = {}, env: NodeJS.ProcessEnv = process.env): Logger {
  const json = env.LOG_FORMAT === 'json';
  const min = levels[(env.LOG_LEVEL || 'info').toLowerCase() as Level] ?? levels.info;
  const emit = (level: Level, msg: string, fields: Fields = {}) => {
    if (levels[level] < min) return;
    const all = { ...base, ...fields };
    if (json) {
      const errorFields = Object.fromEntries(
        Object.entries(all).map(([k, v]) => [k, v instanceof Error ? { message: v.message, name: v.name } : v]),
      );
      process.stderr.write(
        JSON.stringify({ time: new Date().toISOString(), level, component, msg, ...errorFields }) + '\n',
      );
    } else {
      const rest = Object.entries(all)
        .map(([k, v]) => `${k}=${formatValue(v)}`)
        .join(' ');
      const tag = level === 'info' ? '' : ` ${level.toUpperCase()}`;
      process.stderr.write(`[${component}]${tag} ${msg}${rest ? ' ' + rest : ''}\n`);
    }
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (f) => createLogger(component, { ...base, ...f }, env),
  };
}

/** "1m05s" style durations for progress lines. */
export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${(ms / 1000).toFixed(s < 10 ? 1 : 0)}s`;
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/** A logger that drops everything (tests that exercise code which logs progress). */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => silentLogger,
};
