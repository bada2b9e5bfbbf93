/** Loopback hosts: the contract's rule, the one provider definitions are checked by in the server and the console. */
export { isLoopbackHost } from '@gatehouse/contract';
