import path from 'node:path';

/**
 * The main nginx.conf the tests run Debian's nginx with: one worker, and everything nginx writes (temp
 * paths, the access log) in the test's temporary folder, around `http`, the test's own http-level
 * configuration (includes, server blocks).
 */
export function nginxMainConfig(dir: string, http: string, connections = 256): string {
  const at = (name: string) => JSON.stringify(path.join(dir, name));
  return `worker_processes 1;
events { worker_connections ${connections}; }
http {
    client_body_temp_path ${at('client_body')};
    proxy_temp_path ${at('proxy')};
    fastcgi_temp_path ${at('fastcgi')};
    uwsgi_temp_path ${at('uwsgi')};
    scgi_temp_path ${at('scgi')};
    access_log ${at('access.log')};
${http}
}
`;
}
