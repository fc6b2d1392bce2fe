// beta (naive)
int main() { return 0; }
