# An application team's policy: run, dispatch, scale and debug jobs in the
# default namespace, and see the nodes they land on. Nothing else: no node
# changes, no operator actions, no other namespace.
#
#   drover acl policy apply -description="Application team" app examples/acl-app.hcl
#   drover acl token create -name=ci -policy=app

namespace "default" {
  policy = "write"
}

node {
  policy = "read"
}
