package grammar

import "sync"

var dfaCacheMu sync.Mutex
