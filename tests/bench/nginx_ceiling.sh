# Sourced by the load benchmarks (archive_load.sh, api_read_load.sh): the HTTP ceiling each
# server is compared with in the same run, a one-worker nginx answering `return 200` of a
# short body, with its own config, temp and log paths under DIR (never the system nginx).
#
#   start_nginx_ceiling DIR PORT     starts it in the background and sets nginx_pid
start_nginx_ceiling() {
  local dir=$1 port=$2
  mkdir -p "$dir/logs"
  cat > "$dir/nginx.conf" <<EOF
worker_processes 1;
daemon off;
master_process off;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$port;
    location / { default_type text/plain; return 200 "13\n"; }
  }
}
EOF
  nginx -p "$dir" -c "$dir/nginx.conf" &
  nginx_pid=$!
}
