// A throwaway self-signed certificate for 127.0.0.1, made with the system's openssl: the
// fake model server speaks HTTP/2 over TLS with it when a bench or test needs many streams
// at once (browsers open at most six HTTP/1.1 connections to one host).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A P-256 key and a certificate for 127.0.0.1 and localhost, valid for a day.
 * @returns {{ key: string; cert: string }}
 */
export function selfSignedCert() {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-cert-'));
  try {
    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
