# A Nomad agent file as an operator would write it; every key Drover reads.
name       = "node-a"
datacenter = "dc2"
region     = "europe"
data_dir   = "/var/lib/nomad"
bind_addr  = "0.0.0.0"
log_level  = "DEBUG"
log_json   = true

ports {
  http = 5646
  rpc  = 5647
  serf = 5648
}

addresses {
  http = "127.0.0.1"
  rpc  = "10.0.0.5"
}

advertise {
  http = "10.0.0.5:5646"
  rpc  = "10.0.0.5"
  serf = "10.0.0.5"
}

server {
  enabled          = true
  bootstrap_expect = 3

  server_join {
    retry_join     = ["10.0.0.6:5647", "10.0.0.7:5647"]
    retry_interval = "15s"
    retry_max      = 4
  }

  num_schedulers            = 2
  enabled_schedulers        = ["service", "batch"]
  heartbeat_grace           = "20s"
  min_heartbeat_ttl         = "12s"
  max_heartbeats_per_second = 75.5
  failover_heartbeat_ttl    = "6m"
  eval_gc_threshold         = "2h"
  job_gc_threshold          = "8h"
  node_gc_threshold         = "48h"
  deployment_gc_threshold   = "3h"
  batch_eval_gc_threshold   = "36h"
  eval_gc_interval          = "3m"
  job_gc_interval           = "7m"
  node_gc_interval          = "11m"
  deployment_gc_interval    = "13m"
}

client {
  enabled = true
  servers = ["10.0.0.6:5647"]

  server_join {
    retry_join = ["10.0.0.8:5647"]
  }

  node_class = "compute"
  node_pool  = "batch-pool"

  meta {
    rack = "r12"
    zone = "z1"
  }

  reserved {
    cpu            = 500
    memory         = 512
    disk           = 1024
    reserved_ports = "22,80,8000-8010"
  }

  cpu_total_compute        = 8000
  memory_total_mb          = 16384
  network_interface        = "eth0"
  gc_interval              = "2m"
  gc_max_allocs            = 40
  gc_disk_usage_threshold  = 85
  gc_inode_usage_threshold = 75.5

  options {
    "driver.allowlist" = "raw_exec,exec"
    "fingerprint.skip_disk" = "1"
  }

  min_dynamic_port = 21000
  max_dynamic_port = 22000
}

plugin "raw_exec" {
  config {
    enabled = true
  }
}
