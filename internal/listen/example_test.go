package listen_test

import (
	"errors"
	"fmt"

	"github.com/neardup/neardup/internal/listen"
)

func ExampleCheckHost() {
	errInsecure := errors.New("myserver: refusing to listen beyond loopback")
	fmt.Println(listen.CheckHost("127.0.0.1", listen.Policy{}, errInsecure))
	fmt.Println(listen.CheckHost("0.0.0.0", listen.Policy{}, errInsecure))
	fmt.Println(listen.CheckHost("0.0.0.0", listen.Policy{Token: true}, errInsecure))
	fmt.Println(listen.CheckHost("0.0.0.0", listen.Policy{Token: true, TLS: true}, errInsecure))
	// Output:
	// <nil>
	// myserver: refusing to listen beyond loopback: listening on 0.0.0.0 needs a bearer token
	// myserver: refusing to listen beyond loopback: listening on 0.0.0.0 needs TLS (or Insecure, behind a TLS proxy)
	// <nil>
}
